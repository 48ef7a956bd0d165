import Foundation
import SoundscapeCore
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The control socket and the CLI: named errors for bad requests, hostile
/// clients that disturb nobody, exit codes, and an IDL that varlink tools parse.
@Suite("Control socket and CLI", .serialized, .timeLimit(.minutes(1)))
struct ControlSocketTests {
    @Test("bad requests get named varlink errors while the daemon keeps serving everyone else")
    func badRequestsGetNamedErrors() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            try daemon.must("play")
            let events = try daemon.followEvents()
            let client = try FramedSocket(path: daemon.socket, timeout: .seconds(5))

            let cases: [(call: String, error: String, parameter: String?)] = [
                (#"{"method":"io.soundscaped.Player.Dance"}"#, "org.varlink.service.MethodNotFound", nil),
                (#"{"method":"com.example.Nothing.Here"}"#, "org.varlink.service.InterfaceNotFound", nil),
                (
                    #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":101}}"#,
                    "org.varlink.service.InvalidParameter", "volume"
                ),
                (
                    #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":"loud"}}"#,
                    "org.varlink.service.InvalidParameter", "volume"
                ),
                (
                    #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":50.5}}"#,
                    "org.varlink.service.InvalidParameter", "volume"
                ),
                (
                    #"{"method":"io.soundscaped.Player.SetVolume","parameters":{}}"#,
                    "org.varlink.service.InvalidParameter", "volume"
                ),
                (
                    #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":40,"volum":4}}"#,
                    "org.varlink.service.InvalidParameter", "volum"
                ),
                (
                    #"{"method":"io.soundscaped.Player.Play","parameters":{"soundscape":7}}"#,
                    "org.varlink.service.InvalidParameter", "soundscape"
                ),
                (
                    #"{"method":"io.soundscaped.Player.Play","parameters":{"soundscape":"../../etc/passwd"}}"#,
                    "io.soundscaped.Player.NoSuchSoundscape", nil
                ),
                (
                    #"{"method":"io.soundscaped.Player.Play","parameters":{"soundscape":"thunder"}}"#,
                    "io.soundscaped.Player.NoSuchSoundscape", nil
                ),
                (#"{"method":"io.soundscaped.Player.Subscribe"}"#, "org.varlink.service.ExpectedMore", nil),
                (#"{"method":42}"#, "org.varlink.service.InvalidParameter", nil),
                (#"[1,2,3]"#, "org.varlink.service.InvalidParameter", nil),
                ("this is not json", "org.varlink.service.InvalidParameter", nil),
            ]
            for testCase in cases {
                let reply = try client.call(json: testCase.call)
                #expect(reply.errorName == testCase.error, "\(testCase.call) → \(reply)")
                if let parameter = testCase.parameter {
                    #expect(reply.errorParameter == parameter, "\(testCase.call) → \(reply)")
                }
            }
            // The same connection still works, and nothing changed.
            let status = try client.call(json: #"{"method":"io.soundscaped.Player.GetStatus"}"#)
            let fields = try #require((status["parameters"] as? [String: Any])?["status"] as? [String: Any])
            #expect(fields["state"] as? String == "playing")
            #expect(fields["volume"] as? Int == 50)

            // An oversized message closes only that connection.
            let hog = try FramedSocket(path: daemon.socket, timeout: .seconds(5))
            try hog.send(
                Array(#"{"method":"io.soundscaped.Player.GetStatus","parameters":{"x":""#.utf8)
                    + [UInt8](repeating: 0x61, count: 200_000))
            var closed = false
            while let reply = try? hog.receiveObject() {
                #expect(reply.errorName != nil, "an oversized message got a non-error reply: \(reply)")
            }
            closed = true
            #expect(closed)

            // A client that sends and never reads does not stall anyone.
            let deaf = try FramedSocket(path: daemon.socket, timeout: .seconds(5))
            var accepted = 0
            while accepted < 100_000, try deaf.sendMessageIfRoom(#"{"method":"io.soundscaped.Player.GetStatus"}"#) {
                accepted += 1
            }
            #expect(accepted < 100_000, "the daemon kept reading from a client that never reads its replies")

            // Meanwhile everyone else is served: the CLI, and the subscriber sees a new event.
            try daemon.must("volume", "40")
            let changed = try events.next(reason: "volumeChanged")
            #expect(changed["volume"] as? Int == 40)
            #expect(try daemon.status()["volume"] as? Int == 40)
            #expect(daemon.process?.isRunning == true)
            events.stop()
        }
    }

    @Test("soundscapectl exit codes: 0 ok, 1 refused with a clear message, 2 unreachable with a hint, 64 a bad value")
    func exitCodes() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()

            let unknown = try daemon.ctl("play", "thunder")
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("no soundscape or saved mix named 'thunder'"), "\(unknown.stderr)")

            // A volume no daemon would take is a usage error (EX_USAGE), not a refusal.
            let badVolume = try daemon.ctl("volume", "150")
            #expect(badVolume.status == 64)
            #expect(badVolume.stderr.contains("invalid volume '150'"), "\(badVolume.stderr)")
            #expect(badVolume.stderr.contains("Usage: soundscapectl volume"), "\(badVolume.stderr)")
            for preset in ["off": 0, "low": 25, "medium": 50, "high": 75, "max": 100] {
                #expect(try daemon.must("volume", preset.key).stdout.contains("Volume \(preset.value)%"))
            }

            let nowhere = try graph.run([
                try ProductLocator.soundscapectl().path, "status", "--socket",
                graph.directory.appendingPathComponent("nothing.sock").path,
            ])
            #expect(nowhere.status == 2)
            #expect(nowhere.stderr.contains("soundscaped is not running"), "\(nowhere.stderr)")
            #expect(nowhere.stderr.contains("Start it with"), "\(nowhere.stderr)")

            let list = try daemon.must("list", "--json")
            let parsed = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
            let ids = (parsed?["soundscapes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(Set(ids).isSuperset(of: ["ocean-waves", "rain", "brown-noise", "wind"]), "\(ids)")
            #expect(parsed?["default"] as? String == "ocean-waves")
        }
    }

    @Test("one version: soundscaped --version, GetInfo, GetStatus and soundscapectl status name the same")
    func oneVersion() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let printed = try graph.run([try ProductLocator.soundscaped().path, "--version"]).requireSuccess()
            #expect(printed.stdout == SoundscapedVersion.string + "\n")
            #expect(try daemon.status()["version"] as? String == SoundscapedVersion.string)
            let client = try FramedSocket(path: daemon.socket, timeout: .seconds(5))
            let info = try client.call(json: #"{"method":"org.varlink.service.GetInfo"}"#)
            #expect((info["parameters"] as? [String: Any])?["version"] as? String == SoundscapedVersion.string)
            let status = try daemon.must("status").stdout
            let line = status.split(separator: "\n").first { $0.hasPrefix("Version") }
            #expect(line?.split(separator: " ").dropFirst().map(String.init) == [SoundscapedVersion.string], "\(status)")
        }
    }

    @Test("GetInfo and GetInterfaceDescription give an IDL that python-varlink parses and calls through")
    func idlIsParseableByVarlinkTooling() throws {
        // scripts/test provides python-varlink in a venv and names its python here.
        let python = ProcessInfo.processInfo.environment["SOUNDSCAPED_TEST_PYTHON"] ?? "python3"
        let probe = try ChildProcess.run([python, "-c", "import varlink"])
        guard probe.succeeded else {
            throw HarnessError("\(python) has no varlink module: run the tests with scripts/test, or `pip install varlink`")
        }
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let address = "unix:\(daemon.socket)"

            let info = try graph.run([python, "-m", "varlink.cli", "info", address]).requireSuccess()
            #expect(info.stdout.contains("io.soundscaped.Player"))
            #expect(info.stdout.contains("org.varlink.service"))

            // `help` parses the IDL with python-varlink's scanner; `call` validates against it.
            let help = try graph.run([python, "-m", "varlink.cli", "help", "\(address)/io.soundscaped.Player"])
                .requireSuccess()
            #expect(help.stdout.contains("method Subscribe() -> (event: Event)"))
            let call = try graph.run([
                python, "-m", "varlink.cli", "call",
                "\(address)/io.soundscaped.Player.SetVolume", #"{"volume": 35}"#,
            ]).requireSuccess()
            #expect(call.stdout.contains("\"volume\": 35"))
        }
    }
}
