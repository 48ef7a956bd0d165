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
/// deadline is a timerfd of the host's (`Deadline`), armed for the check and disarmed
/// at its end, rather than a NIO scheduled task: a cancelled scheduled task leaves the
/// loop's timer armed, and the loop would wake at every check's deadline for nothing
/// (docs/performance.md). For the same reason the bootstrap's own connect timeout is
/// set past any check interval, where the next check's tick always comes first; the
/// deadline covers the connect.
enum SignerHTTPProbe {
    /// Runs `check` once on `eventLoop`; returns when it has ended.
    static func run(
        _ check: SignerHTTPCheck, timeout: Duration, cancellation: SignerProbe.Cancellation, deadline: Deadline,
        eventLoop: any EventLoop
    ) async -> SignerProbeResult {
        let promise = eventLoop.makePromise(of: SignerProbeResult.self)
        eventLoop.execute {
            Exchange(check: check, timeout: timeout, deadline: deadline, promise: promise).start(cancellation: cancellation)
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
        private let deadline: Deadline
        private var deadlineToken: Int?
        private var deadlineTask: Scheduled<Void>?
        private var done = false

        init(check: SignerHTTPCheck, timeout: Duration, deadline: Deadline, promise: EventLoopPromise<SignerProbeResult>) {
            self.check = check
            self.timeout = timeout
            self.deadline = deadline
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
                    // Kept from now on, so an end that comes while it still connects (the deadline:
                    // an address that never answers a SYN) closes it too.
                    self.channel = channel
                    return channel.eventLoop.makeCompletedFuture {
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
            finish(check.result(status: status, document: document, expected: expected) { $0.text })
        }

        /// The one end of the check: closes what it opened, then answers.
        func finish(_ result: SignerProbeResult) {
            guard !done else { return }
            done = true
            channel?.close(promise: nil)
            deadlineToken.map(deadline.disarm)
            deadlineTask?.cancel()
            promise.succeed(result)
        }

        private func armDeadline() {
            let fired: @Sendable () -> Void = { [self] in finish(.failed("no answer within \(SignerMachine.seconds(timeout)) s")) }
            if let token = deadline.arm(after: timeout, on: eventLoop, fired) {
                deadlineToken = token
            } else {
                // No timerfd (it cannot fail on a Linux of this century): a scheduled task does it.
                deadlineTask = eventLoop.scheduleTask(in: TimeAmount(timeout)) { fired() }
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

    /// The checks' deadline: one timerfd, watched by the event loop as a pipe channel for
    /// as long as its host lives, armed for a check and disarmed at its end (a disarmed
    /// timerfd never wakes anyone). Made on first use and reused, so a check costs two
    /// `timerfd_settime` calls, not a descriptor and a channel. Confined to the event
    /// loop; each arming has a token, so the end of a check cannot disarm the next one's.
    final class Deadline: @unchecked Sendable {
        private var timer: Int32 = -1
        private var channel: (any Channel)?
        private var token = 0
        private var expired: (@Sendable () -> Void)?
        /// When the armed deadline falls, for a registration that fails (a scheduled task then).
        private var due: NIODeadline?

        init() {}

        deinit {
            if let channel { channel.close(promise: nil) } else if timer >= 0 { close(timer) }
        }

        /// Calls `expired` after `timeout` unless disarmed first; the token disarms it. Nil
        /// when there is no timerfd to be had.
        func arm(after timeout: Duration, on eventLoop: any EventLoop, _ expired: @escaping @Sendable () -> Void) -> Int? {
            if timer < 0 {
                timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK) | Int32(TFD_CLOEXEC))
                guard timer >= 0 else { return nil }
                watch(on: eventLoop)
            }
            // Taken before the timer is set, so the timer never expires before it.
            due = .now() + TimeAmount(timeout)
            guard set(nanoseconds: timeout.inNanoseconds()) else {
                due = nil
                return nil
            }
            token += 1
            self.expired = expired
            return token
        }

        func disarm(_ token: Int) {
            guard token == self.token, expired != nil else { return }
            expired = nil
            due = nil
            _ = set(nanoseconds: 0)
        }

        fileprivate func fire() {
            guard let due else { return }
            let left = due - .now()
            // Early by the clocks' rounding: wait out the rest.
            if left > .zero, set(nanoseconds: left.nanoseconds) { return }
            let expired = self.expired
            disarm(token)
            expired?()
        }

        /// Arms the timer `nanoseconds` from now; 0 disarms it.
        private func set(nanoseconds: Int64) -> Bool {
            guard timer >= 0 else { return false }
            var value = itimerspec()
            if nanoseconds > 0 {
                value.it_value = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            }
            return timerfd_settime(timer, 0, &value, nil) == 0
        }

        private func watch(on eventLoop: any EventLoop) {
            let timer = self.timer
            NIOPipeBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DeadlineHandler(deadline: self))
                    }
                }
                .takingOwnershipOfDescriptor(input: timer)
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        self.channel = channel
                    case .failure:
                        close(timer)
                        self.timer = -1
                        // The check armed meanwhile still gets its deadline.
                        if let due = self.due, let expired = self.expired {
                            eventLoop.scheduleTask(deadline: due) { expired() }
                        }
                    }
                }
        }
    }

    /// The deadline's timerfd became readable: it expired.
    final class DeadlineHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private weak var deadline: Deadline?

        init(deadline: Deadline) {
            self.deadline = deadline
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            deadline?.fire()
        }
    }
}
