import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The state database under faults a user's machine really has, on real file
/// systems: the daemon started in a private mount namespace (`unshare -m`)
/// whose state directory is a read-only bind mount, or a tiny tmpfs that is
/// full. The saved keep-alive must still resume, nothing may be moved aside,
/// and a change made meanwhile must reach the disk once it takes writes.
@Suite("State store faults", .serialized, .timeLimit(.minutes(1)))
struct StateStoreFaultTests {
    /// A daemon that played `tone` at 35 % and was stopped cleanly: the saved state says "playing".
    static func savedSession(_ graph: PipeWireGraph) throws -> Soundscaped {
        try graph.createNullSink(name: "speaker")
        try graph.waitForDefaultSink("speaker")
        let daemon = try Soundscaped(graph: graph)
        _ = try ToneLoops.make(id: "tone", frequency: 440, in: daemon.userSoundscapes)
        try daemon.start()
        try daemon.must("volume", "35")
        try daemon.must("play", "tone")
        try daemon.stop()
        return daemon
    }

    static func health(_ daemon: Soundscaped) throws -> [String: [String: Any]] {
        let result = try daemon.ctl("health", "--json")
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let checks = object["checks"] as? [[String: Any]]
        else {
            throw HarnessError("health --json printed no report: \(result)")
        }
        return Dictionary(
            uniqueKeysWithValues: checks.compactMap { check in
                (check["name"] as? String).map { ($0, check) }
            })
    }

    static func storeCheck(_ daemon: Soundscaped) throws -> (ok: Bool, detail: String) {
        let check = try health(daemon)["stateStoreWritable"] ?? [:]
        return (check["ok"] as? Bool ?? false, check["detail"] as? String ?? "")
    }

    @Test("a read-only state directory: the saved session resumes, the store says it cannot write, nothing is moved")
    func readOnlyStateDirectory() throws {
        try PipeWireGraph.withGraph { graph in
            let daemon = try Self.savedSession(graph)
            let state = daemon.stateDirectory.path
            let before = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
            try daemon.start(launcher: [
                "unshare", "-m", "sh", "-c", "mount --bind -o ro \"$1\" \"$1\" && shift && exec \"$@\"", "sh", state,
            ])
            try waitUntil(timeout: .seconds(10), "the saved session to resume from a read-only directory") {
                (try? daemon.status())?["state"] as? String == "playing"
            }
            let status = try daemon.status()
            #expect(status["soundscape"] as? String == "tone")
            #expect(status["volume"] as? Int == 35)
            let store = try Self.storeCheck(daemon)
            #expect(!store.ok, "a read-only store reported writable")
            #expect(store.detail.lowercased().contains("read-only file system"), "detail: \(store.detail)")
            // A change is kept in memory and answered as usual.
            try daemon.must("volume", "40")
            #expect(try daemon.status()["volume"] as? Int == 40)
            try daemon.stop()
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: state).sorted() == before,
                "the read-only directory's files changed")
        }
    }

    @Test("a full disk: the saved session resumes, a change is written as soon as there is room again")
    func fullDisk() throws {
        try PipeWireGraph.withGraph { graph in
            let daemon = try Self.savedSession(graph)
            let state = daemon.stateDirectory.path
            let saved = graph.directory.appendingPathComponent("saved-state").path
            try FileManager.default.moveItem(atPath: state, toPath: saved)
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            // A 512 KiB tmpfs over the state directory, holding the saved database and a file that fills the rest.
            let script = """
                mount -t tmpfs -o size=512k,mode=0700 tmpfs "$1" && cp "$2"/state.sqlite "$1"/ \
                && { dd if=/dev/zero of="$1"/filler bs=4k 2>/dev/null; true; } && shift 2 && exec "$@"
                """
            let child = try daemon.start(launcher: ["unshare", "-m", "sh", "-c", script, "sh", state, saved])
            try waitUntil(timeout: .seconds(10), "the saved session to resume on a full disk") {
                (try? daemon.status())?["state"] as? String == "playing"
            }
            #expect(try daemon.status()["volume"] as? Int == 35)

            try daemon.must("volume", "70")
            try waitUntil(timeout: .seconds(10), "the store to report the failed write") { !(try Self.storeCheck(daemon).ok) }
            let full = try Self.storeCheck(daemon).detail
            #expect(full.contains("no space left"), "detail: \(full)")
            let during = try Self.savedVolume(in: state, namespaceOf: child.pid, immutable: true)
            #expect(during == 35, "saved volume \(String(describing: during)) on a full disk")

            // Room again: the change reaches the disk without another command.
            try ChildProcess.run(["nsenter", "-t", "\(child.pid)", "-m", "rm", "\(state)/filler"]).requireSuccess()
            try waitUntil(timeout: .seconds(15), "the kept change to be written once there is room") {
                try Self.savedVolume(in: state, namespaceOf: child.pid) == 70
            }
            try waitUntil(timeout: .seconds(10), "the store to report itself writable again") { try Self.storeCheck(daemon).ok }
            let files = try ChildProcess.run(["nsenter", "-t", "\(child.pid)", "-m", "ls", state]).requireSuccess().stdout
            #expect(!files.contains("damaged"), "a database was moved aside: \(files)")
            try daemon.stop(signal: SIGKILL)
        }
    }

    /// The saved volume as another reader sees it, inside the daemon's mount namespace.
    /// `immutable` reads the database file alone (no WAL index needed, so it works on a full disk).
    static func savedVolume(in state: String, namespaceOf pid: Int32, immutable: Bool = false) throws -> Int? {
        let python = ProcessInfo.processInfo.environment["SOUNDSCAPED_TEST_PYTHON"] ?? "python3"
        let result = try ChildProcess.run([
            "nsenter", "-t", "\(pid)", "-m", python, "-c",
            "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'/state.sqlite?'+sys.argv[2], uri=True); "
                + "print(c.execute('select volume from player_state').fetchone()[0])",
            state, immutable ? "immutable=1" : "mode=ro",
        ])
        return result.succeeded ? Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
    }
}
