import Glibc
import SoundscapeSystem
import Testing

/// Unix-domain addresses of both kinds, and the sockets made from them.
@Suite struct UnixSocketTests {
    @Test func addressesOfBothKinds() throws {
        let abstract = try UnixSocketAddress(notation: "@abc")
        #expect(abstract.pathBytes == [0, 0x61, 0x62, 0x63])
        #expect(abstract.isAbstract)
        #expect(abstract.description == "@abc")
        abstract.withSockaddr { _, length in
            #expect(Int(length) == MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + 4, "no padding")
        }
        let path = try UnixSocketAddress(notation: "/run/x")
        #expect(path.pathBytes == Array("/run/x".utf8) + [0])
        #expect(path.description == "/run/x")
        for bad in ["", "@", "relative", "/a\0b", "/" + String(repeating: "a", count: 107)] {
            #expect(throws: UnixSocket.Failure.self, "\(bad)") { try UnixSocketAddress(notation: bad) }
        }
        #expect(try UnixSocketAddress(path: "relative").description == "relative")
    }

    @Test func aDatagramReachesABoundSocket() throws {
        let address = try UnixSocketAddress(abstract: "soundscape-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = try UnixSocket.bind(.datagram, to: address, nonBlocking: true)
        defer { close(fd) }
        try UnixSocket.send(Array("READY=1".utf8), to: address)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(fd, &buffer, buffer.count, 0)
        #expect(count == 7)
        #expect(Array(buffer[..<max(count, 0)]) == Array("READY=1".utf8))
    }
}
