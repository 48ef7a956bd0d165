import Glibc
import Testing
@testable import SoundscapeDaemon

/// WATCHDOG_USEC and WATCHDOG_PID, read as sd_watchdog_enabled(3) reads them.
@Suite struct WatchdogIntervalTests {
    private let pid: pid_t = 4242

    @Test func halfOfTheTimeout() {
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"], pid: pid) == .seconds(15))
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_USEC": "200000"], pid: pid) == .milliseconds(100))
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_USEC": "1"], pid: pid) == .nanoseconds(500))
    }

    @Test func anotherProcessesWatchdogIsNotOurs() {
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "4243"], pid: pid) == nil)
    }

    @Test func missingTimeoutMeansNoWatchdog() {
        #expect(SystemdWatchdog.pingInterval(environment: [:], pid: pid) == nil)
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_PID": "4242"], pid: pid) == nil)
    }

    @Test(arguments: ["", "0", "abc", "-5", "+5", " 5", "5 ", "1.5", "0x10", "18446744073709551615", "99999999999999999999"])
    func unusableTimeout(_ value: String) {
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_USEC": value, "WATCHDOG_PID": "4242"], pid: pid) == nil)
    }

    @Test(arguments: ["", "abc", "-4242", "4242x", "0"])
    func unusablePID(_ value: String) {
        #expect(SystemdWatchdog.pingInterval(environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": value], pid: pid) == nil)
    }
}
