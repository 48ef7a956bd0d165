/// An unsigned decimal as systemd writes it into the environment.
///
/// Digits only: `UInt64("+5")` would accept a sign systemd never writes, and a value that
/// is not exactly what systemd writes did not come from systemd.
func parseDecimal(_ text: String) -> UInt64? {
    guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    return UInt64(text)
}
