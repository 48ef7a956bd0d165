import Logging
import ServiceLifecycle
import Varlink

/// Serves the varlink control socket until graceful shutdown, which lets the calls in
/// progress answer first (``VarlinkServer/shutDownGracefully()``). Its server may be shut
/// down before the group is; the service then waits for the group's shutdown.
struct ControlService: Service, CustomStringConvertible {
    let server: VarlinkServer
    let onListening: @Sendable () -> Void

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await server.run(onListening: onListening)
        } onGracefulShutdown: { [server] in
            Task { await server.shutDownGracefully() }
        }
        // Stopped by its owner (the not-configured daemon, its configuration resolved), the
        // server is done before the group stops: the service ends in its turn, as the group
        // expects.
        try await gracefulShutdown()
    }

    var description: String { "control socket" }
}
