import Glibc

/// A detached pthread for one long or blocking job (Foundation's `Thread` is
/// not part of FoundationEssentials, and Swift concurrency's pool must never
/// block).
public enum BlockingThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new thread with a `stackSize`-byte stack. If no thread
    /// can be made, runs it here rather than lose it.
    public static func start(stackSize: Int = 64 * 1024, _ body: @escaping @Sendable () -> Void) {
        if !startIfPossible(stackSize: stackSize, body) { body() }
    }

    /// Runs `body` on a new thread; false (and `body` not run) when none can be made,
    /// for a caller that must not run it on its own thread.
    @discardableResult
    public static func startIfPossible(stackSize: Int = 64 * 1024, _ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Box(body))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, context.toOpaque())
        if result != 0 { context.release() }
        return result == 0
    }
}
