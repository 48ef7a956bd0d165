import Logging
import ServiceLifecycle
import Varlink

/// Serves the varlink control socket until graceful shutdown.
struct ControlService: Service, CustomStringConvertible {
    let server: VarlinkServer
    let onListening: @Sendable () -> Void

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await server.run(onListening: onListening)
        }
    }

    var description: String { "control socket" }
}
