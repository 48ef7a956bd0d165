/// Messages that end in a NUL byte, as varlink frames them on a stream: bytes go
/// in as they arrive, whole messages come out. The framing of `FramedSocket`,
/// kept apart from its system calls; the daemon's NIO side has its own decoder
/// (`VarlinkFrameDecoder`), which also bounds the bytes of all connections together.
public struct NULFrames: Sendable {
    /// The most an unfinished message may hold.
    public let limit: Int
    private var buffer: [UInt8] = []
    /// Where the next message starts in `buffer`.
    private var start = 0
    /// Bytes from `start` known to hold no NUL.
    private var searched = 0

    public init(limit: Int) {
        self.limit = limit
    }

    /// Adds bytes that arrived.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole message, without its NUL; nil until one has arrived.
    public mutating func next() -> [UInt8]? {
        guard let end = buffer[(start + searched)...].firstIndex(of: 0) else {
            searched = buffer.count - start
            if start > 0 {
                // Only an unfinished message is left: move it to the front once.
                buffer.removeFirst(start)
                start = 0
            }
            return nil
        }
        let message = Array(buffer[start..<end])
        start = end + 1
        searched = 0
        return message
    }

    /// The bytes of the message not finished yet (once `next()` returned nil).
    public var unfinished: Int { buffer.count - start }

    /// Whether the unfinished message is already longer than `limit`.
    public var isOverLimit: Bool { unfinished > limit }

    /// `message` framed: its bytes and a NUL.
    public static func frame(_ message: some Sequence<UInt8>) -> [UInt8] {
        Array(message) + [0]
    }
}
