import Foundation
import SoundscapeSystem
import Synchronization
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Many varlink subscribers served by one thread with `poll`, reading frames
/// and pulling out each event's `seq` with a byte search: a client this cheap
/// measures the daemon, not the test's own JSON decoding.
final class SubscriberSwarm: @unchecked Sendable {
    private let fds: [Int32]
    private let seqs: Mutex<[[Int]]>
    private let errors: Mutex<[String?]>
    private let stopFlag = Atomic<Bool>(false)
    private var thread: Thread?

    init(path: String, count: Int) throws {
        var fds: [Int32] = []
        for _ in 0..<count {
            let client = try FramedSocket(path: path, timeout: .seconds(5))
            try client.sendMessage(#"{"method":"io.soundscaped.Player.Subscribe","more":true}"#)
            fds.append(client.detach())
        }
        self.fds = fds
        seqs = Mutex(Array(repeating: [], count: count))
        errors = Mutex(Array(repeating: nil, count: count))
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "subscriber-swarm"
        self.thread = thread
        thread.start()
    }

    deinit {
        stop()
        for fd in fds { close(fd) }
    }

    func stop() {
        stopFlag.store(true, ordering: .relaxed)
    }

    /// The seqs subscriber `index` has received, in arrival order.
    func received(_ index: Int) -> [Int] { seqs.withLock { $0[index] } }
    var counts: [Int] { seqs.withLock { $0.map(\.count) } }
    var errorNames: [String?] { errors.withLock { $0 } }

    private func run() {
        var frames = Array(repeating: NULFrames(limit: FramedSocket.defaultLimit), count: fds.count)
        var chunk = [UInt8](repeating: 0, count: 65536)
        var pollfds = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while !stopFlag.load(ordering: .relaxed) {
            guard poll(&pollfds, nfds_t(pollfds.count), 100) > 0 else { continue }
            for index in pollfds.indices where pollfds[index].revents != 0 {
                let got = read(pollfds[index].fd, &chunk, chunk.count)
                guard got > 0 else {
                    pollfds[index].fd = -1  // closed: poll ignores negative fds
                    continue
                }
                frames[index].append(chunk[0..<got])
                while let frame = frames[index].next() {
                    if let seq = FrameScan.number(after: Array(#""seq":"#.utf8), in: frame).map({ Int($0) }) {
                        seqs.withLock { $0[index].append(seq) }
                    } else if let name = FrameScan.string(after: Array(#""error":""#.utf8), in: frame) {
                        errors.withLock { $0[index] = name }
                    }
                }
            }
        }
    }
}
