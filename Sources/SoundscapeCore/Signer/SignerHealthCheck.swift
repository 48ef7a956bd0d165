/// `signer-health-exit-codes`: what the health command's exit status means.
public enum SignerHealthExitCodes: String, Sendable, Equatable, CaseIterable {
    /// 0 is healthy, anything else has failed.
    case plain
    /// The monitoring-plugins convention (Nagios, Icinga): 0 OK, 1 WARNING (degraded:
    /// it still signs), 2 CRITICAL and 3 UNKNOWN (failed).
    case monitoringPlugins = "monitoring-plugins"

    /// How a run that ended with `exit` reads; `stdout` and `stderr` are the first line of each.
    public func result(_ exit: ExitReason, stdout: String?, stderr: String?) -> SignerProbeResult {
        switch (self, exit) {
        case (_, .exited(code: 0)):
            return .passed(output: stdout)
        case (.plain, _):
            return .failed(exit.description + ((stderr ?? stdout).map { ": \($0)" } ?? ""))
        case (.monitoringPlugins, .exited(code: 1)):
            return .degraded(output: stdout ?? stderr)
        case (.monitoringPlugins, _):
            // A plugin says what is wrong on stdout (`DISK CRITICAL - free space: …`).
            let state: String? =
                switch exit {
                case .exited(code: 2): "CRITICAL"
                case .exited(code: 3): "UNKNOWN"
                default: nil
                }
            return .failed(exit.description + (state.map { " (\($0))" } ?? "") + ((stdout ?? stderr).map { ": \($0)" } ?? ""))
        }
    }
}

/// `signer-health-url` with `signer-health-json`: the built-in HTTP check, which the
/// daemon makes itself (no process is started): a `GET` of `url`, healthy when the
/// answer is 2xx and, with a `condition`, its body is JSON that meets it.
public struct SignerHTTPCheck: Sendable, Equatable {
    public var url: SignerHealthURL
    public var condition: JSONCondition?

    public init(url: SignerHealthURL, condition: JSONCondition? = nil) {
        self.url = url
        self.condition = condition
    }

    /// Bytes of a body read at most; a longer one has failed.
    public static let maximumBodyBytes = 64 * 1024

    /// What an answer means. `document` is the body parsed as JSON (nil: it is not
    /// JSON), `expected` the condition's value parsed alike; `describe` writes a value as JSON.
    public func result<Node: JSONNode>(
        status: Int, document: Node?, expected: Node?, describe: (Node) -> String
    ) -> SignerProbeResult {
        guard (200...299).contains(status) else { return .failed("HTTP \(status)") }
        guard let condition else { return .passed(output: "HTTP \(status)") }
        guard let document else { return .failed("HTTP \(status), but the body is not JSON") }
        guard let expected else { return .failed("\(Settings.signerHealthJSON.key): '\(condition.value)' is not a JSON value") }
        if let failure = condition.failure(in: document, expected: expected, describe: describe) {
            return .failed(failure)
        }
        return .passed(output: condition.passed(in: document, describe: describe))
    }
}

/// `signer-health-url`: an `http://` URL whose host is an IP address, so the check
/// never waits for a name lookup: `http://127.0.0.1:8002/api/status`,
/// `http://[::1]:8002/api/status`. `localhost` is taken as 127.0.0.1 (never looked
/// up). No `https://`, user or password, or `#fragment`: it asks a signer's local API.
public struct SignerHealthURL: Sendable, Equatable, CustomStringConvertible {
    public enum Address: Sendable, Equatable {
        /// Dotted decimal (`127.0.0.1`).
        case ipv4(String)
        /// As written between the brackets (`::1`), without a zone.
        case ipv6(String)
    }

    public let address: Address
    public let port: Int
    /// What the `Host` header says: the authority as written (`localhost:8002`).
    public let host: String
    /// The request target: the path and query (`/api/status`), `/` when the URL has none.
    public let target: String
    private let text: String

    public static let syntax = "http://ADDRESS[:PORT]/PATH, ADDRESS an IP address (127.0.0.1, [::1]) or localhost"

    public init(parsing text: String) throws(JSONPointerError) {
        func refuse(_ why: String) -> JSONPointerError { JSONPointerError("\(why) (expected \(Self.syntax)), got '\(text)'") }
        let scheme = text.prefix { $0 != ":" }
        guard text.dropFirst(scheme.count).hasPrefix("://") else { throw refuse("not a URL") }
        guard scheme.lowercased() == "http" else {
            throw refuse(
                scheme.lowercased() == "https"
                    ? "https is not supported: the check asks the signer's local API over plain http"
                    : "only http:// URLs are supported")
        }
        let rest = text.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var target = String(rest.dropFirst(authority.count))
        guard !target.contains("#") else { throw refuse("a #fragment is never sent; leave it out") }
        guard target.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw refuse("the path may hold only visible ASCII characters (percent-encode the others)")
        }
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        guard !authority.contains("@") else { throw refuse("a user or password in the URL is not supported") }

        let hostPart: Substring
        let portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("an IPv6 address needs its closing ]") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw refuse("after ] only :PORT may follow") }
            portPart = after.isEmpty ? nil : after.dropFirst()
            guard Self.isIPv6(hostPart) else { throw refuse("'\(hostPart)' is not an IPv6 address (zones are not supported)") }
            address = .ipv6(String(hostPart))
        } else {
            let colon = authority.firstIndex(of: ":")
            hostPart = authority[..<(colon ?? authority.endIndex)]
            portPart = colon.map { authority[authority.index(after: $0)...] }
            if hostPart.lowercased() == "localhost" {
                address = .ipv4("127.0.0.1")
            } else if Self.isIPv4(hostPart) {
                address = .ipv4(String(hostPart))
            } else {
                throw refuse(
                    hostPart.isEmpty ? "no address" : "'\(hostPart)' is not an IP address: a host name would need a lookup")
            }
        }
        if let portPart {
            guard portPart.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let port = Int(portPart), (1...65535).contains(port) else {
                throw refuse("the port must be a number from 1 to 65535")
            }
            self.port = port
        } else {
            port = 80
        }
        host = String(authority)
        self.target = target
        self.text = text
    }

    public var description: String { text }

    /// Four decimal numbers 0–255, without leading zeros (which some read as octal).
    static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                guard let value = Int(part), (0...255).contains(value), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    return false
                }
                return part == "0" || !part.hasPrefix("0")
            }
    }

    /// RFC 4291's text forms: eight groups of 1–4 hex digits, one `::` standing for one or
    /// more groups of zeros, and an IPv4 address in place of the last two groups.
    static func isIPv6(_ text: Substring) -> Bool {
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count <= 2, !text.contains(":::") else { return false }
        var groups = 0
        for (index, half) in halves.enumerated() where !half.isEmpty {
            let parts = half.split(separator: ":", omittingEmptySubsequences: false)
            for (position, part) in parts.enumerated() {
                let last = index == halves.count - 1 && position == parts.count - 1
                if last, part.contains("."), isIPv4(part) {
                    groups += 2
                } else if (1...4).contains(part.count), part.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit }) {
                    groups += 1
                } else {
                    return false
                }
            }
        }
        return halves.count == 2 ? groups <= 7 : groups == 8
    }
}
