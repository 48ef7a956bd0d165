import ServiceLifecycle
import SoundscapeCore

/// Keeps systemd's STATUS line in step with the player by following the
/// event hub like any subscriber. Only runs under systemd.
struct StatusLineService: Service, CustomStringConvertible {
    let hub: EventHub
    let systemd: SystemdNotifierService

    func run() async throws {
        await cancelWhenGracefulShutdown {
            // A finished service would end the whole group, so a dropped subscription
            // (we fell behind) is simply renewed; its snapshot brings the line up to date.
            while !Task.isCancelled {
                let subscription = hub.subscribe(queueLimit: 16)
                for await published in subscription.events {
                    systemd.setStatus(SystemdStatusLine.text(for: published.event.status, reason: published.event.reason))
                }
                subscription.cancel()
            }
        }
    }

    var description: String { "systemd status line" }
}
