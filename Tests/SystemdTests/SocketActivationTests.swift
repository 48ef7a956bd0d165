import Glibc
import Logging
import NIOPosix
import Testing
import Varlink
@testable import SoundscapeDaemon

/// LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES with real descriptors behind them.
@Suite struct SocketActivationTests {
    private let pid: pid_t = 4242

    private func environment(_ sockets: PassedSockets, names: String? = nil, pid: String = "4242") -> [String: String] {
        var environment = ["LISTEN_PID": pid, "LISTEN_FDS": "\(sockets.count)"]
        environment["LISTEN_FDNAMES"] = names
        return environment
    }

    private func parse(_ environment: [String: String], _ sockets: PassedSockets)
        -> Result<SocketActivation.Sockets?, SocketActivationError>
    {
        SocketActivation.listeners(environment: environment, pid: pid, startingAt: sockets.base)
    }

    @Test func notActivated() {
        #expect(SocketActivation.listeners(environment: [:], pid: pid) == .success(nil))
        #expect(SocketActivation.listeners(environment: ["LISTEN_FDS": "1"], pid: pid) == .success(nil))
        #expect(SocketActivation.listeners(environment: ["LISTEN_PID": "4242"], pid: pid) == .success(nil))
    }

    @Test func anotherProcessesSocketsAreLeftAlone() throws {
        let sockets = try PassedSockets([.listeningUnixStream])
        #expect(parse(environment(sockets, pid: "4243"), sockets) == .success(nil))
        #expect(!sockets.isCloseOnExec(sockets.base), "not ours, not touched")
    }

    @Test func oneUnnamedSocket() throws {
        let sockets = try PassedSockets([.listeningUnixStream])
        let result = try parse(environment(sockets), sockets).get()
        #expect(result == .init(control: sockets.base, passed: [.init(descriptor: sockets.base, name: nil)]))
        #expect(sockets.isCloseOnExec(sockets.base))
    }

    @Test func oneSocketWithAnotherName() throws {
        let sockets = try PassedSockets([.listeningUnixStream])
        #expect(try parse(environment(sockets, names: "soundscaped.socket"), sockets).get()?.control == sockets.base)
    }

    @Test func theSocketNamedControlIsChosen() throws {
        let sockets = try PassedSockets([.unixDatagram, .listeningUnixStream, .regularFile])
        let result = try #require(try parse(environment(sockets, names: "other:control:log"), sockets).get())
        #expect(result.control == sockets.base + 1)
        #expect(result.passed.map(\.name) == ["other", "control", "log"])
        for fd in sockets.base..<sockets.base + 3 {
            #expect(sockets.isCloseOnExec(fd), "descriptor \(fd)")
        }
    }

    /// The names are cut at the ":" byte: a combining mark after it begins the next name.
    @Test func aNameMayBeginWithACombiningMark() throws {
        let sockets = try PassedSockets([.listeningUnixStream, .unixDatagram])
        let result = try #require(try parse(environment(sockets, names: "control:\u{306}log"), sockets).get())
        #expect(result.control == sockets.base)
        #expect(result.passed.map { $0.name.map { Array($0.utf8) } } == [Array("control".utf8), Array("\u{306}log".utf8)])
    }

    @Test func severalUnnamedSocketsMeansTheFirst() throws {
        let sockets = try PassedSockets([.listeningUnixStream, .unixDatagram])
        #expect(try parse(environment(sockets), sockets).get()?.control == sockets.base)
    }

    @Test func severalNamedSocketsWithoutControl() throws {
        let sockets = try PassedSockets([.listeningUnixStream, .listeningUnixStream])
        #expect(parse(environment(sockets, names: "a:b"), sockets) == .failure(.noControlSocket(names: ["a", "b"])))
    }

    @Test func namesMustMatchTheCount() throws {
        let sockets = try PassedSockets([.listeningUnixStream, .listeningUnixStream])
        #expect(
            parse(environment(sockets, names: "control"), sockets)
                == .failure(.nameCountMismatch(names: ["control"], descriptors: 2)))
    }

    @Test func unlistenedSocketIsRefused() throws {
        let sockets = try PassedSockets([.unlistenedUnixStream])
        #expect(parse(environment(sockets), sockets) == .failure(.notListening(descriptor: sockets.base)))
    }

    @Test func regularFileIsRefused() throws {
        let sockets = try PassedSockets([.regularFile])
        #expect(parse(environment(sockets), sockets) == .failure(.notASocket(descriptor: sockets.base)))
        #expect(sockets.isCloseOnExec(sockets.base), "close-on-exec even when refused")
    }

    @Test func datagramSocketIsRefused() throws {
        let sockets = try PassedSockets([.unixDatagram])
        #expect(
            parse(environment(sockets), sockets)
                == .failure(.notStream(descriptor: sockets.base, type: CInt(SOCK_DGRAM.rawValue))))
    }

    @Test func tcpSocketIsRefused() throws {
        let sockets = try PassedSockets([.listeningTCP])
        #expect(
            parse(environment(sockets), sockets)
                == .failure(.notUnixFamily(descriptor: sockets.base, family: AF_INET)))
    }

    @Test func closedDescriptorIsRefused() throws {
        let sockets = try PassedSockets([])
        #expect(
            SocketActivation.listeners(environment: ["LISTEN_PID": "4242", "LISTEN_FDS": "1"], pid: pid, startingAt: sockets.base)
                == .failure(.notOpen(descriptor: sockets.base)))
    }

    @Test(arguments: ["", "abc", "-1", "0", "+3", "1x"])
    func unusablePID(_ value: String) {
        #expect(
            SocketActivation.listeners(environment: ["LISTEN_PID": value, "LISTEN_FDS": "1"], pid: pid)
                == .failure(.invalidPID(value)))
    }

    @Test(arguments: ["", "abc", "-1", "0", "1.0", "99999999999"])
    func unusableCount(_ value: String) {
        #expect(
            SocketActivation.listeners(environment: ["LISTEN_PID": "4242", "LISTEN_FDS": value], pid: pid)
                == .failure(.invalidCount(value)))
    }

    @Test func errorsNameTheProblem() {
        #expect("\(SocketActivationError.notListening(descriptor: 3))" == "socket activation: descriptor 3 is not listening")
        #expect("\(SocketActivationError.invalidCount("x"))".contains("LISTEN_FDS=x"))
    }

    /// The descriptor chosen here is what the daemon hands to VarlinkServer; it serves on it
    /// and readiness follows once it listens.
    @Test func varlinkServesThePassedSocket() async throws {
        let sockets = try PassedSockets([.listeningUnixStream])
        let control = try #require(try parse(environment(sockets), sockets).get()).control
        let notify = try DatagramSink(.path)
        let noLogs = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let systemd = SystemdNotifierService(
            environment: ["NOTIFY_SOCKET": notify.address], logger: noLogs,
            healthCheck: { true })
        // NIO owns the descriptor from here on and closes it; take it out of the fixture.
        let owned = dup(control)
        let server = VarlinkServer(
            listener: .boundFileDescriptor(owned), interfaces: [],
            info: .init(vendor: "test", product: "soundscaped", version: "0", url: "x"))
        let serving = Task { try await server.run { systemd.markReady(status: "Listening") } }
        defer { serving.cancel() }
        await notify.wait { $0.count >= 1 }
        #expect(notify.messages() == ["READY=1\nSTATUS=Listening"])
        let client = try await VarlinkClient.connect(unixPath: sockets.path(of: 0))
        let info = try await client.call("org.varlink.service.GetInfo")
        #expect(info["vendor"] == "test")
        await client.close()
        serving.cancel()
        try await serving.value
    }
}

/// The only test that touches the real environment; it puts back what it found.
@Suite(.serialized) struct ActivationEnvironmentTests {
    @Test func unsetRemovesOnlyTheListenVariables() {
        let names = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "SOUNDSCAPED_SYSTEMD_TEST"]
        let saved = names.map { name in getenv(name).map { String(cString: $0) } }
        defer {
            for (name, value) in zip(names, saved) {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        for name in names { setenv(name, "1", 1) }
        SocketActivation.unsetEnvironment()
        #expect(getenv("LISTEN_PID") == nil)
        #expect(getenv("LISTEN_FDS") == nil)
        #expect(getenv("LISTEN_FDNAMES") == nil)
        #expect(getenv("SOUNDSCAPED_SYSTEMD_TEST").map { String(cString: $0) } == "1")
    }
}
