import Foundation
import Testing
@testable import SoundscapeAudio

@Suite struct ServerSocketWatchTests {
    @Test func findsTheSocketWhereLibpipewireLooks() {
        #expect(ServerSocketWatch.socketPlace(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])! == ("/run/user/1000", "pipewire-0"))
        #expect(
            ServerSocketWatch.socketPlace(environment: [
                "XDG_RUNTIME_DIR": "/run/user/1000", "PIPEWIRE_RUNTIME_DIR": "/tmp/pw",
                "PIPEWIRE_REMOTE": "pipewire-1",
            ])! == ("/tmp/pw", "pipewire-1"))
        #expect(ServerSocketWatch.socketPlace(environment: ["PIPEWIRE_REMOTE": "/srv/pw/socket"])! == ("/srv/pw", "socket"))
        #expect(ServerSocketWatch.socketPlace(environment: [:]) == nil)
    }

    @Test func reportsTheSocketAppearingAndNothingElse() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("socket-watch-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let watch = try #require(ServerSocketWatch(environment: ["XDG_RUNTIME_DIR": directory.path]))
        #expect(!watch.socketAppeared())
        #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("pulse-0").path, contents: nil))
        #expect(!watch.socketAppeared(), "another file is not the socket")
        #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("pipewire-0").path, contents: nil))
        #expect(watch.socketAppeared())
        #expect(!watch.socketAppeared(), "each appearance is reported once")
    }
}
