import Foundation
import SoundscapeAudio
import SoundscapeCore
import Synchronization
import TestSupport

/// An `AudioOutput` that records what the player asks of it and lets the test
/// report the facts a real output would (connected, streaming, a fade-out
/// done). The one fake in the player's tests: files, the database, the event
/// hub and the signer host are real.
final class FakeAudioOutput: AudioOutput, Sendable {
    enum Call: Sendable, Equatable, CustomStringConvertible {
        case start
        case shutdown
        /// (A user's start fades in gently; a return, a restored session included, promptly.)
        case play(SoundscapeID, Volume, FadeIn = .gentle)
        /// Several layers, or one below full level.
        case playLayers([Mix.Layer], Volume, FadeIn = .gentle)
        case dim(Duration)
        case undim
        case setVolume(Volume)
        case stop
        case setTarget(String?)
        case reactivate
        case recreateStream
        case reconnect

        var description: String {
            switch self {
            case .start: "start"
            case .shutdown: "shutdown"
            case .play(let id, let volume, let fade): "play(\(id), \(volume.percent)%, \(fade))"
            case .playLayers(let layers, let volume, let fade):
                "play(\(layers.map(\.description).joined(separator: " + ")), \(volume.percent)%, \(fade))"
            case .dim(let duration): "dim(\(duration))"
            case .undim: "undim"
            case .setVolume(let volume): "setVolume(\(volume.percent)%)"
            case .stop: "stop"
            case .setTarget(let sink): "setTarget(\(sink ?? "nil"))"
            case .reactivate: "reactivate"
            case .recreateStream: "recreateStream"
            case .reconnect: "reconnect"
            }
        }
    }

    let events: AsyncStream<AudioOutputEvent>
    let eventSink: AsyncStream<AudioOutputEvent>.Continuation
    /// Reports `.stopped` when told to stop, as a fade-out that completes would.
    let finishesFades: Bool

    /// A test waiting for a call that matches `predicate`.
    private struct Waiter {
        var id: Int
        var predicate: @Sendable (Call) -> Bool
        var continuation: CheckedContinuation<Call?, Never>
    }

    private struct Record {
        var calls: [Call] = []
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    private let ledger = Mutex(Record())
    /// Runs as each call is made, before it is recorded (on the caller's thread).
    private let observer = Mutex<(@Sendable (Call) -> Void)?>(nil)

    /// `body` sees each call as the player makes it, with the player's state as it is then.
    func whenCalled(_ body: @escaping @Sendable (Call) -> Void) {
        observer.withLock { $0 = body }
    }

    init(finishesFades: Bool = true) {
        (events, eventSink) = AsyncStream.makeStream(of: AudioOutputEvent.self)
        self.finishesFades = finishesFades
    }

    var calls: [Call] { ledger.withLock { $0.calls } }

    /// A fact, as the real output reports it.
    func report(_ event: AudioOutputEvent) {
        eventSink.yield(event)
    }

    /// Waits (bounded) until a call matching `predicate` has been made; returns it.
    /// Woken by the call itself, never by polling.
    @discardableResult
    func waitForCall(_ what: String, seconds: Double = 5, where predicate: @escaping @Sendable (Call) -> Bool) async throws -> Call {
        try await withTimeout("the player to call \(what); calls so far: \(calls)", seconds: seconds) { [self] in
            let id = ledger.withLock { record in
                defer { record.nextWaiter += 1 }
                return record.nextWaiter
            }
            let call = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let made = ledger.withLock { record -> Call? in
                        if let call = record.calls.first(where: predicate) { return call }
                        record.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                        return nil
                    }
                    if let made { continuation.resume(returning: made) }
                }
            } onCancel: {
                let waiter = ledger.withLock { record -> Waiter? in
                    guard let index = record.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return record.waiters.remove(at: index)
                }
                waiter?.continuation.resume(returning: nil)
            }
            guard let call else { throw CancellationError() }
            return call
        }
    }

    /// Waits for exactly this call.
    func waitForCall(_ call: Call, seconds: Double = 5) async throws {
        try await waitForCall(call.description, seconds: seconds) { $0 == call }
    }

    /// Forgets the calls so far, so the next wait sees only new ones.
    func clearCalls() {
        ledger.withLock { $0.calls.removeAll() }
    }

    private func record(_ call: Call) {
        observer.withLock { $0 }?(call)
        let woken = ledger.withLock { record -> [Waiter] in
            record.calls.append(call)
            let woken = record.waiters.filter { $0.predicate(call) }
            record.waiters.removeAll { $0.predicate(call) }
            return woken
        }
        for waiter in woken { waiter.continuation.resume(returning: call) }
    }

    func start() { record(.start) }
    func shutdown() { record(.shutdown) }
    func play(_ layers: [LayerData], volume: Volume, fadeIn: FadeIn) {
        if layers.count == 1, layers[0].level == Mix.fullLevel {
            record(.play(layers[0].data.id, volume, fadeIn))
        } else {
            record(.playLayers(layers.map { Mix.Layer($0.data.id, level: $0.level) }, volume, fadeIn))
        }
    }
    func dim(over duration: Duration) { record(.dim(duration)) }
    func undim() { record(.undim) }
    func setVolume(_ volume: Volume) { record(.setVolume(volume)) }
    func stop() {
        record(.stop)
        if finishesFades {
            eventSink.yield(.streaming(false))
            eventSink.yield(.stopped)
        }
    }
    func setTarget(_ sink: String?) { record(.setTarget(sink)) }
    func reactivate() { record(.reactivate) }
    func recreateStream() { record(.recreateStream) }
    func reconnectNow(reason: String) { record(.reconnect) }
}
