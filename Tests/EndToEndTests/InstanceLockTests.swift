import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One daemon per socket and per state directory: a second one is refused,
/// naming the first's pid, and leaves the first one's files as they were.
@Suite("One instance", .serialized, .timeLimit(.minutes(1)))
struct InstanceLockTests {
    /// Identity and modification time of every file in `directory` (and the socket).
    static func fingerprint(_ paths: [String]) -> [String: String] {
        var result: [String: String] = [:]
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0 else { result[path] = "absent"; continue }
            result[path] = "\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
        return result
    }

    static func files(of daemon: Soundscaped) -> [String] {
        let state = daemon.stateDirectory.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: state)) ?? []
        return names.map { state + "/" + $0 } + [daemon.socket, daemon.socket + ".lock"]
    }

    @Test("a second daemon on the same state directory, or the same socket, exits 1 naming the first and touches nothing")
    func secondDaemonIsRefused() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let first = try Soundscaped(graph: graph)
            let process = try first.start()
            try first.must("volume", "33")
            try first.must("play")
            let before = Self.fingerprint(Self.files(of: first))

            // Another socket, the same state directory.
            let otherSocket = graph.directory.appendingPathComponent("other/control.sock").path
            let sameState = try graph.run(
                [
                    try ProductLocator.soundscaped().path, "--socket", otherSocket,
                    "--state-dir", first.stateDirectory.path,
                ], timeout: .seconds(10))
            #expect(sameState.status == 1, "\(sameState)")
            #expect(sameState.stderr.contains("already running (pid \(process.pid)"), "\(sameState.stderr)")
            #expect(!FileManager.default.fileExists(atPath: otherSocket), "the refused daemon bound its socket")

            // The same socket, another state directory.
            let otherState = graph.directory.appendingPathComponent("other-state").path
            let sameSocket = try graph.run(
                [
                    try ProductLocator.soundscaped().path, "--socket", first.socket,
                    "--state-dir", otherState,
                ], timeout: .seconds(10))
            #expect(sameSocket.status == 1, "\(sameSocket)")
            #expect(sameSocket.stderr.contains("already running (pid \(process.pid)"), "\(sameSocket.stderr)")
            #expect(!FileManager.default.fileExists(atPath: otherState + "/state.sqlite"), "the refused daemon made a database")

            #expect(Self.fingerprint(Self.files(of: first)) == before, "the first daemon's files changed")
            let status = try first.status()
            #expect(status["state"] as? String == "playing" && status["volume"] as? Int == 33)

            // Once the first is gone, its lock goes with it (even killed): the next one starts.
            try first.stop(signal: SIGKILL)
            try first.start()
            #expect(try first.status()["volume"] as? Int == 33)
        }
    }
}
