import Foundation
@testable import Varlink
import TestSupport

let testServiceInfo = VarlinkServer.ServiceInfo(
    vendor: "Example Vendor",
    product: "varlink-tests",
    version: "1.0",
    url: "https://example.org/varlink-tests"
)

/// A fresh directory under /tmp (short, as socket paths are limited to ~108 bytes),
/// removed with everything in it by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/varlink-test-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        path = String(cString: created)
    }

    var socketPath: String { path + "/service.sock" }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Collects the server's log lines, so a test can wait for one.
struct LogRecorder {
    let lines: AsyncStream<String>
    let logger: @Sendable (String) -> Void

    init() {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        logger = { continuation.yield($0) }
    }

    func waitFor(lineContaining text: String) async throws {
        try await withTimeout("a log line containing \"\(text)\"") { [lines] in
            guard await lines.first(where: { $0.contains(text) }) != nil else {
                throw StreamEnded(waitingFor: text)
            }
        }
    }
}

struct ServerStoppedBeforeListening: Error {}

/// Runs a server on `listener` for the duration of `body`, then cancels it and waits for it
/// to finish, so that a test also checks the server shuts down cleanly.
@discardableResult
func withServer<T: Sendable>(
    _ listener: VarlinkServer.Listener,
    interfaces: [any VarlinkInterface] = [TestInterface()],
    limits: VarlinkServer.Limits = .init(),
    logger: @escaping @Sendable (String) -> Void = { _ in },
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let server = VarlinkServer(
        listener: listener,
        interfaces: interfaces,
        info: testServiceInfo,
        logger: logger,
        limits: limits
    )
    return try await withTimeout("the test against a running server", seconds: 10) {
        try await withThrowingTaskGroup(of: Void.self) { group in
            try await start(server, in: &group)
            let result = try await body()
            group.cancelAll()
            try await group.waitForAll()
            return result
        }
    }
}

/// Runs `server` as a task of `group`, returning once it accepts connections; cancel the
/// group to stop it.
func start(_ server: VarlinkServer, in group: inout ThrowingTaskGroup<Void, any Error>) async throws {
    let (listening, listeningContinuation) = AsyncStream.makeStream(of: Void.self)
    group.addTask {
        defer { listeningContinuation.finish() }
        try await server.run(onListening: { listeningContinuation.yield() })
    }
    guard await listening.first(where: { true }) != nil else {
        try await group.waitForAll()
        throw ServerStoppedBeforeListening()
    }
}

/// The common case: a server on a socket in a fresh temporary directory.
@discardableResult
func withServer<T: Sendable>(
    interfaces: [any VarlinkInterface] = [TestInterface()],
    limits: VarlinkServer.Limits = .init(),
    logger: @escaping @Sendable (String) -> Void = { _ in },
    _ body: @escaping @Sendable (_ path: String) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.socketPath
    return try await withServer(.unixPath(path), interfaces: interfaces, limits: limits, logger: logger) {
        try await body(path)
    }
}

/// A client for the duration of `body`, closed afterwards whatever happens.
@discardableResult
func withClient<T: Sendable>(_ path: String, _ body: (VarlinkClient) async throws -> T) async throws -> T {
    let client = try await VarlinkClient.connect(unixPath: path)
    do {
        let result = try await body(client)
        await client.close()
        return result
    } catch {
        await client.close()
        throw error
    }
}
