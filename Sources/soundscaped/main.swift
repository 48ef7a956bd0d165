import Glibc

// The entry point, synchronous on purpose. With `@main` on the async command,
// Swift parks the main thread in dispatch_main(), which calls pthread_exit; its
// forced unwind of the main stack binary-searches our whole unwind table, and
// the pages it touches (about 0.5 MB, made resident in 64 KB windows) stay for
// the life of a process that runs for days. Detached: the command must not
// inherit the main actor, whose queue nothing drains here.
Task.detached {
    await Soundscaped.main()
    exit(EXIT_SUCCESS)
}
while true {
    pause()
}
