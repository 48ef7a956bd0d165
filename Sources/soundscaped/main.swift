import Glibc
import SoundscapeDaemon

// The entry point, synchronous on purpose, for two reasons.
//
// With `@main` on the async command, Swift parks the main thread in
// dispatch_main(), which calls pthread_exit; its forced unwind of the main stack
// binary-searches our whole unwind table, and the pages it touches (about
// 0.5 MB, made resident in 64 KB windows) stay for the life of a process that
// runs for days.
//
// And the main thread is free to collect SIGTERM and SIGINT itself, in
// sigwaitinfo, instead of swift-service-lifecycle's libdispatch signal source:
// with concurrency on NIO's event loop (EventLoopConcurrency), nothing starts
// libdispatch, whose pool monitor would wake us every second. The signals are
// blocked before any thread exists, so every thread inherits the mask and they
// wait, pending, for this thread. (The signer host is spawned with an empty mask.)
var terminationSignals = sigset_t()
sigemptyset(&terminationSignals)
sigaddset(&terminationSignals, SIGTERM)
sigaddset(&terminationSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &terminationSignals, nil)

let shutdown = ShutdownRequest()
if EventLoopConcurrency.install() {
    Soundscaped.signals = .external(shutdown)
} else {
    // A toolchain without the executor factory: the library's handler, on libdispatch.
    pthread_sigmask(SIG_UNBLOCK, &terminationSignals, nil)
}

// Detached: the command must not inherit the main actor, whose queue nothing drains here.
Task.detached {
    await Soundscaped.main()
    exit(EXIT_SUCCESS)
}
if case .external = Soundscaped.signals {
    while true {
        var info = siginfo_t()
        if sigwaitinfo(&terminationSignals, &info) > 0 { shutdown.request() }
    }
} else {
    while true { pause() }
}
