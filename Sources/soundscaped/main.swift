import Glibc
import SoundscapeDaemon
import SoundscapeSystem

// The entry point, synchronous on purpose, for two reasons.
//
// With `@main` on the async command, Swift parks the main thread in
// dispatch_main(), which calls pthread_exit; its forced unwind of the main stack
// binary-searches our whole unwind table, and the pages it touches (about
// 0.5 MB, made resident in 64 KB windows) stay for the life of a process that
// runs for days.
//
// And the main thread is free to collect the signals itself, in sigwaitinfo,
// instead of a libdispatch signal source: with concurrency on NIO's event loop
// (EventLoopConcurrency), nothing starts libdispatch, whose pool monitor would
// wake us every second. The signals are blocked before any thread exists, so
// every thread inherits the mask and they wait, pending, for this thread:
// - SIGTERM, SIGINT: a graceful shutdown (fade out, stop the signer, save);
// - SIGHUP: read the config file again (a reload; it never ends the daemon);
// - SIGUSR1, SIGUSR2: ignored (collected here so that their default action,
//   termination, cannot end the keep-alive).
// SIGPIPE is ignored: a peer that hangs up is an error on that write, not our end.
// (The signer host is spawned with default dispositions and an empty mask.)
//
// Then the hardening the daemon applies itself (`Hardening`; docs/systemd.md): first the
// signer's spawner thread, the one thread it must not reach, then writable-and-executable
// memory denied to this thread and so to every thread made after it.
MallocTuning.fixMmapThreshold()

var collected = sigset_t()
sigemptyset(&collected)
for signal in [SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2] { sigaddset(&collected, signal) }
pthread_sigmask(SIG_BLOCK, &collected, nil)
signal(SIGPIPE, SIG_IGN)

Soundscaped.spawner = SignerSpawner.beforeHardening()
Soundscaped.hardening = Hardening.denyWriteExecute()

// The runtime's executor factory, when this compiler has the one we tested;
// otherwise Swift concurrency stays on libdispatch, and the signals are still ours.
_ = EventLoopConcurrency.install()
let signals = Soundscaped.signals

// Detached: the command must not inherit the main actor, whose queue nothing drains here.
Task.detached {
    await Soundscaped.main()
    exit(EXIT_SUCCESS)
}
while true {
    var info = siginfo_t()
    let signal = sigwaitinfo(&collected, &info)
    switch signal {
    case SIGTERM, SIGINT: signals.shutdown.request()
    case SIGHUP: signals.reload.request()
    default: break
    }
}
