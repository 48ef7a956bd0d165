import SoundscapeCore
import Varlink

/// `soundscapectl events` once its daemon went away: it waits for one to answer on the
/// socket again, as `journalctl -f` waits for more journal, and goes on from that one's
/// snapshot. Said on stderr, so that `--json`'s stdout stays one event a line: the loss
/// once ("went away; waiting"), what a daemon that answers but will not stream says
/// (not configured: once, until it changes), and the reconnection, with the daemon's
/// version and state.
enum Following {
    /// The pause before each try: the first soon (a restart takes a moment), doubling up to
    /// the last, which is how late a daemon that comes back is seen at worst. Under systemd
    /// the first try connects (the socket is systemd's) and starts the daemon.
    static let firstPause: Duration = .milliseconds(100)
    static let longestPause: Duration = .seconds(2)

    /// Follows daemon after daemon until interrupted; `ended` is what ended the first stream.
    static func reconnect(to path: String, after ended: (any Error)?, _ show: ([String: JSONValue]) throws -> Void) async -> Never {
        say(lost: ended)
        var pause = firstPause
        var lastNote: String?
        while true {
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, longestPause)
            guard let client = try? await VarlinkClient.connect(unixPath: path, timeout: Control.Bound.connect) else { continue }
            var streamed = false
            var ended: (any Error)?
            do {
                try await Control(client: client).followEvents { reply in
                    if !streamed {
                        streamed = true
                        say(reconnectedWith: reply)
                    }
                    try show(reply)
                }
            } catch {
                ended = error
            }
            await client.close()
            if streamed {
                say(lost: ended)
                pause = firstPause
                lastNote = nil
            } else if let error = ended as? VarlinkError, error.name != "\(Control.interface).Restarting" {
                // It answers but will not stream (not configured): say why, once, and wait on.
                let note = Control.describe(error)
                if note != lastNote { writeStderr("soundscapectl: \(note)\nsoundscapectl: waiting for soundscaped…\n") }
                lastNote = note
            }
        }
    }

    /// The stream ended: the daemon went away, or (a named error) dropped this subscriber.
    static func say(lost error: (any Error)?) {
        if let error = error as? VarlinkError {
            writeStderr("soundscapectl: \(Control.describe(error)); subscribing again…\n")
        } else {
            writeStderr("soundscapectl: soundscaped went away; waiting for it to come back…\n")
        }
    }

    /// Where it reconnected: the snapshot's daemon version and state.
    static func say(reconnectedWith snapshot: [String: JSONValue]) {
        let status = try? Output.decodeEvent(snapshot).status
        let version = status?.version ?? "(version not said)"
        writeStderr("soundscapectl: reconnected: soundscaped \(version), state \(status?.state.rawValue ?? "?")\n")
    }
}
