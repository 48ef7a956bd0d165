import Foundation
import TestSupport

/// The desktop companion beside the daemon it mirrors: soundscaped-desktop
/// (the release build next to the daemon's) on the graph's session bus, first
/// while nothing changes (it should never wake), then while the daemon's
/// volume changes 20 times a second (every change is an event it turns into a
/// PropertiesChanged), each window with the daemon measured alongside.
struct CompanionResult: Codable, Sendable {
    var quiet: ProcessWindowResult
    var daemonQuiet: ProcessWindowResult
    var busy: ProcessWindowResult
    var busyChanges: Int
}

struct CompanionBench {
    let daemon: DaemonUnderTest
    let graph: PipeWireGraph

    func run(seconds: Double) async throws -> CompanionResult {
        let executable = URL(fileURLWithPath: daemon.executable).deletingLastPathComponent()
            .appendingPathComponent("soundscaped-desktop").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw HarnessError("no \(executable): build the soundscaped-desktop product")
        }
        let companion = try graph.spawn(executable, ["--socket", daemon.socket], name: "soundscaped-desktop")
        defer { _ = companion.terminate() }
        // Serving once its name is on the bus and it reports the daemon's state.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let status = try graph.run(["playerctl", "-p", "soundscaped", "status"])
            if status.succeeded, status.stdout.hasPrefix("Playing") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let daemonPID = daemon.pid else { throw HarnessError("the daemon is not running") }

        let quietWindow = ProcessWindow()
        quietWindow.begin([companion.pid, daemonPID])
        try await Task.sleep(for: .seconds(seconds))
        let quiet = quietWindow.end()

        let busyWindow = ProcessWindow()
        busyWindow.begin([companion.pid])
        let changes = Int(seconds * 20)
        for index in 0..<changes {
            _ = try await daemon.call("SetVolume", ["volume": .number(Double(40 + index % 2))])
            try await Task.sleep(for: .milliseconds(50))
        }
        let busy = busyWindow.end()
        return CompanionResult(quiet: quiet[0], daemonQuiet: quiet[1], busy: busy[0], busyChanges: changes)
    }
}
