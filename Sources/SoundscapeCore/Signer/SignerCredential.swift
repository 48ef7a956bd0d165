/// `signer-credential = NAME:PATH` or `NAME`: one credential the signer host finds in
/// `$CREDENTIALS_DIRECTORY/NAME`, as a systemd unit's `LoadCredential=` gives a service
/// (systemd.exec(5)), so a signer written for such a unit works unchanged.
///
/// With a path, the file's bytes (a file of the user's, `chmod 600`, checked like a
/// `signer-stdin` file); with a name alone, the credential soundscaped.service itself
/// was given (its own `$CREDENTIALS_DIRECTORY/NAME`: `LoadCredential=`,
/// `LoadCredentialEncrypted=`, `SetCredential=` in its unit).
public struct SignerCredential: Sendable, Equatable, CustomStringConvertible {
    public enum Source: Sendable, Equatable {
        /// A file of the user's.
        case file(String)
        /// The daemon's own credential of the same name.
        case inherited
    }

    public let name: String
    public let source: Source

    /// systemd's limit on all of a unit's credentials together (1 MiB), which ours share too.
    public static let totalSizeLimit = 1 << 20
    public static let syntax = "NAME:PATH (an absolute path) or NAME (a credential soundscaped.service was given)"

    public init(name: String, source: Source) {
        self.name = name
        self.source = source
    }

    /// `NAME:/absolute/path` or `NAME`; why not, in words, for anything else.
    public static func parse(_ text: String) -> Result<SignerCredential, SettingError> {
        let name: String
        let source: Source
        if let (before, after) = SeparatedText.cut(text, at: ":") {
            name = String(before)
            let path = String(after)
            guard FilePaths.isAbsolute(path), path.utf8.count > 1 else {
                return .failure(SettingError("expects \(syntax), got a path that is not absolute after '\(name):'"))
            }
            source = .file(path)
        } else {
            name = text
            source = .inherited
        }
        if let problem = nameProblem(name) { return .failure(SettingError(problem)) }
        return .success(SignerCredential(name: name, source: source))
    }

    /// What systemd refuses in a credential's name (`credential_name_valid`: a file name
    /// that is also a valid `LISTEN_FDNAMES` entry), in words; nil when it is fine.
    public static func nameProblem(_ name: String) -> String? {
        guard !name.isEmpty else { return "expects \(syntax), got no name" }
        guard name != ".", name != ".." else { return "'\(name)' is not a credential name" }
        guard name.utf8.count <= 255 else { return "a credential name is at most 255 characters" }
        guard name.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) && $0 != "/" && $0 != ":" }) else {
            let shown = name.unicodeScalars.map { (0x20..<0x7F).contains($0.value) ? String($0) : "?" }.joined()
            return "a credential name is printable ASCII without '/' or ':', got '\(shown)'"
        }
        return nil
    }

    /// `NAME:PATH`, or `NAME` for the daemon's own.
    public var description: String {
        switch source {
        case .file(let path): "\(name):\(path)"
        case .inherited: name
        }
    }

    /// The later list's credentials over the earlier's, a name given again replacing
    /// the earlier one where it stood (a flag's over the file's).
    public static func merged(_ earlier: [SignerCredential], _ later: [SignerCredential]) -> [SignerCredential] {
        var result = earlier
        for credential in later {
            if let index = result.firstIndex(where: { $0.name == credential.name }) {
                result[index] = credential
            } else {
                result.append(credential)
            }
        }
        return result
    }
}
