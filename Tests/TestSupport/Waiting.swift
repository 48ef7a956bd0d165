import Foundation

/// Error type thrown by the test-support library. The message is meant to be
/// read by a human looking at a failed test, so it carries all the context
/// (elapsed time, last observed state, log tails) we have.
public struct HarnessError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

extension Duration {
    /// The duration as (fractional) seconds.
    var inSeconds: Double { self / .seconds(1) }

    static func seconds(fractional value: Double) -> Duration {
        .nanoseconds(Int64((value * 1e9).rounded()))
    }
}

func formatSeconds(_ d: Duration) -> String {
    String(format: "%.2f s", d.inSeconds)
}

/// Polls `condition` every `pollInterval` until it returns `true`, or throws a
/// `HarnessError` naming `message` and the elapsed time once `timeout` has
/// passed. The condition is evaluated one last time at the deadline.
/// Errors thrown by `condition` are propagated immediately (use `try?` inside
/// the closure for transient failures).
///
/// This blocks the calling thread; use it for state that has no event we
/// could await (e.g. "node appeared in the PipeWire graph").
@discardableResult
public func waitUntil(
    timeout: Duration = .seconds(5),
    pollInterval: Duration = .milliseconds(50),
    _ message: @autoclosure () -> String,
    condition: () throws -> Bool
) throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start.advanced(by: timeout)
    while true {
        if try condition() {
            return clock.now - start
        }
        let now = clock.now
        if now >= deadline {
            throw HarnessError(
                "Timed out after \(formatSeconds(now - start)) (limit \(formatSeconds(timeout))) waiting for: \(message())"
            )
        }
        let remaining = deadline - now
        Thread.sleep(forTimeInterval: min(pollInterval, remaining).inSeconds)
    }
}

/// Async flavour of `waitUntil`, sleeping with `Task.sleep` between polls.
/// Overload resolution picks it when `condition` is async (contains `await`);
/// with a synchronous condition the blocking version above is used, even
/// from async code.
@discardableResult
public func waitUntil(
    timeout: Duration = .seconds(5),
    pollInterval: Duration = .milliseconds(50),
    _ message: @autoclosure () -> String,
    condition: () async throws -> Bool
) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start.advanced(by: timeout)
    while true {
        if try await condition() {
            return clock.now - start
        }
        let now = clock.now
        if now >= deadline {
            throw HarnessError(
                "Timed out after \(formatSeconds(now - start)) (limit \(formatSeconds(timeout))) waiting for: \(message())"
            )
        }
        try await Task.sleep(for: min(pollInterval, deadline - now))
    }
}

/// Polls `produce` until it returns a non-nil value and returns that value;
/// throws like `waitUntil` on timeout.
public func waitForValue<T>(
    timeout: Duration = .seconds(5),
    pollInterval: Duration = .milliseconds(50),
    _ message: @autoclosure () -> String,
    produce: () throws -> T?
) throws -> T {
    var result: T?
    try waitUntil(timeout: timeout, pollInterval: pollInterval, message()) {
        result = try produce()
        return result != nil
    }
    return result!
}
