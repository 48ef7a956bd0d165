/// The XDG locations the daemon and the CLI agree on.
public enum DaemonPaths {
    public static let socketEnvironmentVariable = "SOUNDSCAPED_SOCKET"

    /// `--socket`, else `$SOUNDSCAPED_SOCKET`, else `$XDG_RUNTIME_DIR/soundscaped/control.sock`.
    public static func socket(explicit: String?, environment: [String: String]) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[socketEnvironmentVariable], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        guard let runtime = environment["XDG_RUNTIME_DIR"], FilePaths.isAbsolute(runtime) else { return nil }
        return runtime + "/soundscaped/control.sock"
    }

    /// `--state-dir`, else `$XDG_STATE_HOME/soundscaped`, else `~/.local/state/soundscaped`.
    public static func stateDirectory(explicit: String?, environment: [String: String]) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        if let stateHome = environment["XDG_STATE_HOME"], FilePaths.isAbsolute(stateHome) {
            return stateHome + "/soundscaped"
        }
        guard let home = environment["HOME"], FilePaths.isAbsolute(home) else { return nil }
        return home + "/.local/state/soundscaped"
    }

    /// `$XDG_CACHE_HOME/soundscaped`, else `~/.cache/soundscaped`.
    public static func cacheDirectory(environment: [String: String]) -> String? {
        if let cacheHome = environment["XDG_CACHE_HOME"], FilePaths.isAbsolute(cacheHome) {
            return cacheHome + "/soundscaped"
        }
        guard let home = environment["HOME"], FilePaths.isAbsolute(home) else { return nil }
        return home + "/.cache/soundscaped"
    }
}
