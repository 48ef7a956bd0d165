import Glibc

/// Reads the watchdog systemd armed for us (`WatchdogSec=`), as `sd_watchdog_enabled(3)` does.
public enum SystemdWatchdog {
    /// How often to send `WATCHDOG=1`, or nil when no watchdog is ours to feed.
    ///
    /// Half the timeout, as sd_watchdog_enabled(3) advises: a ping that is late by up to half
    /// an interval (a slow health check, a busy machine) still arrives in time.
    /// `WATCHDOG_PID` names the process the timeout was armed for; a child that inherited
    /// the variables must not keep its parent's watchdog fed.
    public static func pingInterval(environment: [String: String], pid: pid_t) -> Duration? {
        guard let usecText = environment["WATCHDOG_USEC"], let usec = parseDecimal(usecText),
            usec > 0, usec <= UInt64(Int64.max)
        else { return nil }
        if let pidText = environment["WATCHDOG_PID"] {
            guard let owner = parseDecimal(pidText), owner == UInt64(pid) else { return nil }
        }
        return .microseconds(Int64(usec)) / 2
    }
}
