import SoundscapeCore
import Testing

/// The built-in HTTP check's pure parts: JSON pointers (RFC 6901), the condition on
/// the body, the URL it takes, what an answer means; and what a health command's
/// exit status means under each `signer-health-exit-codes`.
@Suite struct SignerHealthCheckTests {
    /// A JSON document for the tests (the daemon's is Varlink's `JSONValue`).
    indirect enum J: JSONNode, CustomStringConvertible {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([J])
        case object([String: J])

        func member(_ name: String) -> J? {
            if case .object(let members) = self { members[name] } else { nil }
        }
        var elements: [J]? {
            if case .array(let items) = self { items } else { nil }
        }
        var description: String {
            switch self {
            case .null: "null"
            case .bool(let value): "\(value)"
            case .number(let value): value == value.rounded() ? "\(Int(value))" : "\(value)"
            case .string(let value): "\"\(value)\""
            case .array(let items): "[" + items.map(\.description).joined(separator: ",") + "]"
            case .object(let members): "{" + members.keys.sorted().map { "\"\($0)\":\(members[$0]!)" }.joined(separator: ",") + "}"
            }
        }
    }

    /// RFC 6901's own example document (section 5).
    static let rfc: J = .object([
        "foo": .array([.string("bar"), .string("baz")]), "": .number(0), "a/b": .number(1), "c%d": .number(2),
        "e^f": .number(3), "g|h": .number(4), "i\\j": .number(5), "k\"l": .number(6), " ": .number(7), "m~n": .number(8),
    ])

    static let igloo: J = .object([
        "status": .string("running"),
        "health": .object(["isConnected": .bool(true), "relays": .number(3)]),
        "peers": .array([.object(["online": .bool(true)]), .object(["online": .bool(false)])]),
    ])

    static func pointer(_ text: String) throws -> JSONPointer { try JSONPointer(parsing: text) }

    @Test func rfc6901sExamplesResolve() throws {
        let cases: [(String, J)] = [
            ("", Self.rfc), ("/foo", .array([.string("bar"), .string("baz")])), ("/foo/0", .string("bar")), ("/", .number(0)),
            ("/a~1b", .number(1)), ("/c%d", .number(2)), ("/e^f", .number(3)), ("/g|h", .number(4)), ("/i\\j", .number(5)),
            ("/k\"l", .number(6)), ("/ ", .number(7)), ("/m~0n", .number(8)),
        ]
        for (text, expected) in cases {
            #expect(try Self.pointer(text).resolve(in: Self.rfc) == expected, "'\(text)'")
            #expect(try Self.pointer(text).description == text, "written back as it was")
        }
    }

    @Test func escapesAreUndoneInOrderAndABadOneIsRefused() throws {
        // ~01 is "~1" (~0 first gives ~, and that ~ is not read again), not "/".
        #expect(try Self.pointer("/~01").tokens == ["~1"])
        #expect(try Self.pointer("/a~1b/~0").tokens == ["a/b", "~"])
        for bad in ["/a~", "/a~2", "/~x", "health/isConnected"] {
            #expect(throws: JSONPointerError.self, "'\(bad)'") { try Self.pointer(bad) }
        }
    }

    @Test func whatDoesNotResolveIsNil() throws {
        for text in ["/missing", "/health/isConnected/deeper", "/peers/2", "/peers/01", "/peers/-", "/peers/x", "/status/0"] {
            #expect(try Self.pointer(text).resolve(in: Self.igloo) == nil, "'\(text)'")
        }
        #expect(try Self.pointer("/peers/1/online").resolve(in: Self.igloo) == .bool(false))
        // On an object a number is a member's name.
        #expect(try Self.pointer("/0").resolve(in: J.object(["0": .null])) == .null)
    }

    static func condition(_ text: String) throws -> JSONCondition { try JSONCondition(parsing: text) }

    @Test func aConditionIsAPointerAnOperatorAndAValue() throws {
        let condition = try Self.condition("/health/isConnected == true")
        #expect(condition.pointer.tokens == ["health", "isConnected"])
        #expect(condition.op == .equal)
        #expect(condition.value == "true")
        #expect(try Self.condition("  /status!=\"down\" ").description == "/status != \"down\"")
        #expect(try Self.condition("/a b == \"x == y\"").pointer.tokens == ["a b"], "the first operator splits")
        #expect(try Self.condition("/a b == \"x == y\"").value == "\"x == y\"")
        for bad in ["/health/isConnected", "/health/isConnected ==", "health == true", "/a~2 == 1", "= true"] {
            #expect(throws: JSONPointerError.self, "'\(bad)'") { try Self.condition(bad) }
        }
    }

    @Test func aConditionSaysWhyItFails() throws {
        let describe: (J) -> String = { $0.description }
        let connected = try Self.condition("/health/isConnected == true")
        #expect(connected.failure(in: Self.igloo, expected: J.bool(true), describe: describe) == nil)
        #expect(connected.passed(in: Self.igloo, describe: describe) == "/health/isConnected is true")
        let disconnected: J = .object(["health": .object(["isConnected": .bool(false)])])
        #expect(connected.failure(in: disconnected, expected: .bool(true), describe: describe) == "/health/isConnected is false, not true")
        #expect(connected.failure(in: J.object([:]), expected: .bool(true), describe: describe) == "/health/isConnected is missing")
        let notDown = try Self.condition("/status != \"down\"")
        #expect(notDown.failure(in: Self.igloo, expected: .string("down"), describe: describe) == nil)
        #expect(notDown.failure(in: J.object(["status": .string("down")]), expected: .string("down"), describe: describe) == "/status is \"down\"")
        let relays = try Self.condition("/health/relays == 3")
        #expect(relays.failure(in: Self.igloo, expected: .number(3), describe: describe) == nil)
        let long = J.string(String(repeating: "x", count: 100))
        let cut = try #require(try Self.condition(" == 1").failure(in: long, expected: .number(1), describe: describe))
        #expect(cut.hasPrefix("the body is \"xxx") && cut.hasSuffix("…, not 1") && cut.count < 80, "\(cut)")
    }

    static func url(_ text: String) throws -> SignerHealthURL { try SignerHealthURL(parsing: text) }

    @Test func urlsToAnAddressAreTaken() throws {
        let igloo = try Self.url("http://127.0.0.1:8002/api/status")
        #expect(igloo.address == .ipv4("127.0.0.1"))
        #expect(igloo.port == 8002)
        #expect(igloo.host == "127.0.0.1:8002")
        #expect(igloo.target == "/api/status")
        #expect(igloo.description == "http://127.0.0.1:8002/api/status")
        let six = try Self.url("HTTP://[::1]:8002/api/status?verbose=1")
        #expect(six.address == .ipv6("::1"))
        #expect(six.target == "/api/status?verbose=1")
        #expect(six.host == "[::1]:8002")
        let local = try Self.url("http://localhost")
        #expect(local.address == .ipv4("127.0.0.1"))
        #expect(local.port == 80)
        #expect(local.target == "/")
        #expect(local.host == "localhost")
        #expect(try Self.url("http://10.0.0.2?x").target == "/?x")
        for address in ["::", "::1", "fe80::1", "2001:db8::8a2e:370:7334", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1", "1:2:3:4:5:6:7::"] {
            #expect(try Self.url("http://[\(address)]/").address == .ipv6(address))
        }
    }

    @Test func otherURLsAreRefusedSayingWhy() throws {
        let refused: [(String, String)] = [
            ("https://127.0.0.1/", "https is not supported"), ("ftp://127.0.0.1/", "only http://"),
            ("127.0.0.1:8002/api", "not a URL"), ("http://signer.local/api", "would need a lookup"),
            ("http://127.0.0.1:0/", "port"), ("http://127.0.0.1:65536/", "port"), ("http://127.0.0.1:x/", "port"),
            ("http://user:pw@127.0.0.1/", "user or password"), ("http://127.0.0.1/#top", "fragment"),
            ("http://127.0.0.1/a b", "visible ASCII"), ("http://[::1/", "closing ]"), ("http://[fe80::1%eth0]/", "not an IPv6"),
            ("http://[1:2:3:4:5:6:7:8:9]/", "not an IPv6"), ("http://[1::2::3]/", "not an IPv6"), ("http://[12345::]/", "not an IPv6"),
            ("http://256.0.0.1/", "not an IP"), ("http://127.0.0.01/", "not an IP"), ("http://127.1/", "not an IP"),
            ("http:///api", "no address"),
        ]
        for (text, why) in refused {
            let error = #expect(throws: JSONPointerError.self, "'\(text)'") { try Self.url(text) }
            #expect(error?.description.contains(why) == true, "'\(text)': \(error?.description ?? "")")
        }
    }

    @Test func anAnswerIsHealthyWhenItIs2xxAndMeetsTheCondition() throws {
        let describe: (J) -> String = { $0.description }
        let url = try Self.url("http://127.0.0.1:8002/api/status")
        let bare = SignerHTTPCheck(url: url)
        #expect(bare.result(status: 200, document: nil as J?, expected: nil, describe: describe) == .passed(output: "HTTP 200"))
        #expect(bare.result(status: 204, document: nil as J?, expected: nil, describe: describe) == .passed(output: "HTTP 204"))
        #expect(bare.result(status: 500, document: nil as J?, expected: nil, describe: describe) == .failed("HTTP 500"))
        #expect(bare.result(status: 301, document: nil as J?, expected: nil, describe: describe) == .failed("HTTP 301"))
        let check = SignerHTTPCheck(url: url, condition: try Self.condition("/health/isConnected == true"))
        #expect(
            check.result(status: 200, document: Self.igloo, expected: .bool(true), describe: describe)
                == .passed(output: "/health/isConnected is true"))
        let off: J = .object(["health": .object(["isConnected": .bool(false)])])
        #expect(
            check.result(status: 200, document: off, expected: .bool(true), describe: describe) == .failed("/health/isConnected is false, not true"))
        #expect(check.result(status: 200, document: nil, expected: .bool(true), describe: describe) == .failed("HTTP 200, but the body is not JSON"))
        #expect(check.result(status: 503, document: Self.igloo, expected: .bool(true), describe: describe) == .failed("HTTP 503"))
    }

    @Test func exitCodesArePlainOrTheMonitoringPluginsOnes() {
        let plain = SignerHealthExitCodes.plain
        #expect(plain.result(.exited(code: 0), stdout: "3/3 relays", stderr: nil) == .passed(output: "3/3 relays"))
        #expect(plain.result(.exited(code: 1), stdout: "out", stderr: "not connected") == .failed("exited with status 1: not connected"))
        #expect(plain.result(.exited(code: 1), stdout: "out", stderr: nil) == .failed("exited with status 1: out"))
        #expect(plain.result(.signaled(9), stdout: nil, stderr: nil) == .failed("killed by signal 9 (SIGKILL)"))
        let plugins = SignerHealthExitCodes.monitoringPlugins
        #expect(plugins.result(.exited(code: 0), stdout: "PEERS OK - 3/3", stderr: nil) == .passed(output: "PEERS OK - 3/3"))
        #expect(plugins.result(.exited(code: 1), stdout: "PEERS WARNING - 2/3", stderr: "x") == .degraded(output: "PEERS WARNING - 2/3"))
        #expect(
            plugins.result(.exited(code: 2), stdout: "PEERS CRITICAL - 1/3", stderr: "x")
                == .failed("exited with status 2 (CRITICAL): PEERS CRITICAL - 1/3"))
        #expect(
            plugins.result(.exited(code: 3), stdout: nil, stderr: "no such peer file") == .failed("exited with status 3 (UNKNOWN): no such peer file")
        )
        #expect(plugins.result(.exited(code: 4), stdout: nil, stderr: nil) == .failed("exited with status 4"))
        #expect(plugins.result(.signaled(15), stdout: nil, stderr: nil) == .failed("killed by signal 15 (SIGTERM)"))
    }

    @Test func theSettingsReadAndRefuseAsTheTableSays() throws {
        var values = SettingValues()
        try Settings.signerHealthURL.take("http://127.0.0.1:8002/api/status", name: "signer-health-url", context: SettingContext(), into: &values)
        try Settings.signerHealthJSON.take("/health/isConnected == true", name: "signer-health-json", context: SettingContext(), into: &values)
        let configuration = SignerConfiguration(command: ["/bin/true"], values: values)
        #expect(configuration.healthHTTP?.url.port == 8002)
        #expect(configuration.healthHTTP?.condition?.value == "true")
        #expect(configuration.machine.health != nil, "a URL is a health check: the machine schedules it")
        #expect(SignerConfiguration.healthProblem(values) == nil)

        // A value the context's JSON check refuses names itself.
        let strict = SettingContext(checkJSON: { $0 == "ok" ? "unquoted" : nil })
        #expect(throws: SettingError.self) {
            try Settings.signerHealthJSON.take("/status == ok", name: "signer-health-json", context: strict, into: &values)
        }
        #expect(throws: SettingError.self) {
            try Settings.signerHealthURL.take("https://127.0.0.1/", name: "--signer-health-url", context: SettingContext(), into: &values)
        }
        #expect(try Settings.signerHealthExitCodes.parse("monitoring-plugins") == .monitoringPlugins)
        #expect(throws: SettingError.self) { try Settings.signerHealthExitCodes.parse("nagios") }

        // Both checks: refused, blaming the URL; a condition without its URL: refused.
        var both = values
        try Settings.signerHealthCommand.take("/bin/true", name: "signer-health-command", context: SettingContext(), into: &both)
        #expect(SignerConfiguration.healthProblem(both)?.setting.key == Settings.signerHealthURL.key)
        var conditionOnly = SettingValues()
        try Settings.signerHealthJSON.take("/a == 1", name: "signer-health-json", context: SettingContext(), into: &conditionOnly)
        #expect(SignerConfiguration.healthProblem(conditionOnly)?.setting.key == Settings.signerHealthJSON.key)
    }
}
