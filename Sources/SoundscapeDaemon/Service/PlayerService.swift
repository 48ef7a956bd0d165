import ServiceLifecycle

/// Runs the player (and with it the audio output) for the daemon's lifetime.
/// On graceful shutdown the sound fades out before the output disconnects.
struct PlayerService: Service, CustomStringConvertible {
    let player: Player

    func run() async throws {
        await withGracefulShutdownHandler {
            await player.run()
        } onGracefulShutdown: {
            Task { await player.shutdown() }
        }
    }

    var description: String { "player" }
}
