import Foundation
import SoundscapeSystem
import Testing
@testable import Varlink
import TestSupport

/// Preparing, guarding and cleaning up the listening socket.
@Suite struct ListenerTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func createsAPrivateDirectoryAndSocketAndRemovesTheSocketOnShutdown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/run/service.sock"
        try await withServer(.unixPath(path)) {
            #expect(try mode(directory.path + "/run") == 0o700)
            #expect(try mode(path) == 0o600)
            try await withClient(path) { client in
                _ = try await client.call("org.varlink.service.GetInfo")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/run"))
    }

    @Test func leavesAnExistingDirectoryAlone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try await withServer(.unixPath(directory.socketPath)) {}
        #expect(try mode(directory.path) == 0o755)
    }

    @Test func replacesAStaleSocketFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.socketPath
        // Bound but never listening: what a crashed server leaves behind.
        close(try UnixSocket.bind(.stream, to: UnixSocketAddress(path: path)))
        #expect(FileManager.default.fileExists(atPath: path))

        try await withServer(.unixPath(path)) {
            try await withClient(path) { client in
                _ = try await client.call("org.varlink.service.GetInfo")
            }
        }
    }

    @Test func refusesAPathAnotherServerAnswersOn() async throws {
        try await withServer { path in
            let second = VarlinkServer(listener: .unixPath(path), interfaces: [], info: testServiceInfo)
            await #expect(throws: VarlinkServerError.alreadyServed(path: path)) {
                try await withTimeout("the second server to refuse starting") { try await second.run() }
            }
            // The first server still owns its socket.
            try await withClient(path) { client in
                _ = try await client.call("org.varlink.service.GetInfo")
            }
        }
    }

    @Test func refusesToDeleteSomethingThatIsNotASocket() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.socketPath
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        let server = VarlinkServer(listener: .unixPath(path), interfaces: [], info: testServiceInfo)
        await #expect(throws: VarlinkServerError.pathIsNotASocket(path: path)) {
            try await withTimeout("the server to refuse starting") { try await server.run() }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    @Test func servesAnInheritedListeningSocket() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.socketPath
        let descriptor = try UnixSocket.bind(.stream, to: UnixSocketAddress(path: path), listening: true)
        try await withServer(.boundFileDescriptor(descriptor)) {
            try await withClient(path) { client in
                _ = try await client.call("org.varlink.service.GetInfo")
            }
        }
        // Socket activation owns the file; the server leaves it.
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func unreachableServiceIsDistinguishable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        await #expect {
            try await VarlinkClient.connect(unixPath: directory.socketPath)
        } throws: { error in
            guard case VarlinkClientError.notReachable(let path, _) = error else { return false }
            return path == directory.socketPath
        }

        close(try UnixSocket.bind(.stream, to: UnixSocketAddress(path: directory.socketPath)))
        await #expect {
            try await VarlinkClient.connect(unixPath: directory.socketPath)
        } throws: { error in
            if case VarlinkClientError.notReachable = error { return true }
            return false
        }
    }
}
