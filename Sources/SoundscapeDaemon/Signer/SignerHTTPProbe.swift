#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSoundscapeSystem
import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import SoundscapeCore
import Varlink

/// One run of the built-in HTTP check (`signer-health-url`, `signer-health-json`): a
/// `GET` made by the daemon itself on its event loop, so no process is started and
/// nothing blocks (NIO's HTTP/1 codec on a non-blocking socket; the address is an IP
/// literal, so there is no name lookup).
///
/// It ends, exactly once, with the answer; at `timeout` (`no answer within 5 s`); or
/// when `cancellation` says its instance is over: each closes the channel. The
/// deadline is a timerfd of its own, closed with the check, rather than a NIO
/// scheduled task: a cancelled scheduled task leaves the loop's timer armed, and the
/// loop would wake at every check's deadline for nothing (docs/performance.md). For the
/// same reason the bootstrap's own connect timeout is set past any check interval,
/// where the next check's tick always comes first; the deadline covers the connect.
enum SignerHTTPProbe {
    /// Runs `check` once on `eventLoop`; returns when it has ended.
    static func run(
        _ check: SignerHTTPCheck, timeout: Duration, cancellation: SignerProbe.Cancellation, eventLoop: any EventLoop
    ) async -> SignerProbeResult {
        let promise = eventLoop.makePromise(of: SignerProbeResult.self)
        eventLoop.execute {
            Exchange(check: check, timeout: timeout, promise: promise).start(cancellation: cancellation)
        }
        return (try? await promise.futureResult.get()) ?? .failed("the check ended without a result")
    }

    /// One request. Confined to its event loop: every method runs there (the connect's
    /// and the channels' callbacks, and the cancel, which `execute`s), hence unchecked.
    final class Exchange: @unchecked Sendable {
        let check: SignerHTTPCheck
        let timeout: Duration
        let promise: EventLoopPromise<SignerProbeResult>
        private var eventLoop: any EventLoop { promise.futureResult.eventLoop }
        private var channel: (any Channel)?
        private var deadline: (any Channel)?
        private var deadlineTask: Scheduled<Void>?
        private var done = false

        init(check: SignerHTTPCheck, timeout: Duration, promise: EventLoopPromise<SignerProbeResult>) {
            self.check = check
            self.timeout = timeout
            self.promise = promise
        }

        func start(cancellation: SignerProbe.Cancellation) {
            let address: SocketAddress
            do {
                switch check.url.address {
                case .ipv4(let ip), .ipv6(let ip): address = try SocketAddress(ipAddress: ip, port: check.url.port)
                }
            } catch {
                return finish(.failed("\(check.url): \(error)"))
            }
            armDeadline()
            let loop = eventLoop
            cancellation.whenCancelled {
                loop.execute { self.finish(.failed("cancelled: the instance it checked is over")) }
            }
            ClientBootstrap(group: eventLoop)
                .connectTimeout(.hours(48))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(exchange: self))
                    }
                }
                .connect(to: address)
                .whenComplete { result in
                    switch result {
                    case .success(let channel): self.connected(channel)
                    case .failure(let error): self.finish(.failed(Self.words(error)))
                    }
                }
        }

        private func connected(_ channel: any Channel) {
            guard !done else {
                channel.close(promise: nil)
                return
            }
            self.channel = channel
            let url = check.url
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: url.host)
            headers.add(name: "User-Agent", value: "soundscaped")
            headers.add(name: "Accept", value: "application/json")
            headers.add(name: "Connection", value: "close")
            channel.write(
                HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: url.target, headers: headers)), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }

        /// The whole answer is in: what it means (`SignerHTTPCheck.result`).
        func answered(status: Int, body: ByteBuffer) {
            var document: JSONBody?
            var expected: JSONBody?
            if let condition = check.condition {
                document = JSONBody(parsing: body.readableBytesView)
                expected = JSONBody(parsing: Array(condition.value.utf8))
            }
            finish(check.result(status: status, document: document, expected: expected) { $0.value.description })
        }

        /// The one end of the check: closes what it opened, then answers.
        func finish(_ result: SignerProbeResult) {
            guard !done else { return }
            done = true
            channel?.close(promise: nil)
            deadline?.close(promise: nil)
            deadlineTask?.cancel()
            promise.succeed(result)
        }

        private func armDeadline() {
            let fired: @Sendable () -> Void = { [self] in finish(.failed("no answer within \(SignerMachine.seconds(timeout)) s")) }
            let timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK) | Int32(TFD_CLOEXEC))
            var value = itimerspec()
            let nanoseconds = max(timeout.inNanoseconds(), 1)
            value.it_value = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            guard timer >= 0, timerfd_settime(timer, 0, &value, nil) == 0 else {
                if timer >= 0 { close(timer) }
                // No timerfd (it cannot fail on a Linux of this century): a scheduled task does it.
                deadlineTask = eventLoop.scheduleTask(in: TimeAmount(timeout)) { fired() }
                return
            }
            NIOPipeBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DeadlineHandler(fired: fired))
                    }
                }
                .takingOwnershipOfDescriptor(input: timer)
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        if self.done { channel.close(promise: nil) } else { self.deadline = channel }
                    case .failure:
                        close(timer)
                        if !self.done { self.deadlineTask = self.eventLoop.scheduleTask(in: TimeAmount(self.timeout)) { fired() } }
                    }
                }
        }

        /// A failed connect or exchange, in words (`connection refused`).
        static func words(_ error: any Error) -> String {
            if let error = error as? IOError {
                switch error.errnoCode {
                case ECONNREFUSED: return "connection refused"
                case ECONNRESET: return "connection reset"
                case EHOSTUNREACH: return "no route to host"
                case ENETUNREACH: return "network unreachable"
                default: return String(cString: strerror(error.errnoCode))
                }
            }
            if error is HTTPParserError { return "the answer is not HTTP (\(error))" }
            return "\(error)"
        }
    }

    /// Collects the answer: its status and up to `SignerHTTPCheck.maximumBodyBytes` of body.
    final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let exchange: Exchange
        private var status: Int?
        private var body = ByteBuffer()

        init(exchange: Exchange) {
            self.exchange = exchange
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
            case .body(var part):
                guard body.readableBytes + part.readableBytes <= SignerHTTPCheck.maximumBodyBytes else {
                    return exchange.finish(.failed("the body is larger than \(SignerHTTPCheck.maximumBodyBytes / 1024) KiB"))
                }
                body.writeBuffer(&part)
            case .end:
                exchange.answered(status: status ?? 0, body: body)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            exchange.finish(.failed(Exchange.words(error)))
        }

        func channelInactive(context: ChannelHandlerContext) {
            exchange.finish(.failed("the connection closed before a whole answer"))
        }
    }

    /// The deadline's timerfd became readable: it expired.
    final class DeadlineHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let fired: @Sendable () -> Void

        init(fired: @escaping @Sendable () -> Void) {
            self.fired = fired
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            fired()
        }
    }
}

/// A JSON document as the condition walks it: Varlink's `JSONValue`, parsed by
/// FoundationEssentials' `JSONDecoder` (top-level scalars included).
struct JSONBody: JSONNode {
    let value: JSONValue

    init(_ value: JSONValue) {
        self.value = value
    }

    /// Nil when `bytes` are not one JSON value.
    init?(parsing bytes: some Sequence<UInt8>) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return nil }
        self.value = value
    }

    /// Why `text` is not one JSON value, nil when it is (`SettingContext.checkJSON`).
    static func problem(_ text: String) -> String? {
        JSONBody(parsing: Array(text.utf8)) == nil ? "JSON cannot read it" : nil
    }

    func member(_ name: String) -> JSONBody? { value[name].map(JSONBody.init) }
    var elements: [JSONBody]? { value.arrayValue?.map(JSONBody.init) }
}
