#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

extension SoundscapeCatalog.Locations {
    /// Where soundscapes are looked for by default:
    /// - built-in: a `soundscapes/` folder with a manifest found by walking up from
    ///   the executable (a build run from the checkout), else `<prefix>/share/soundscaped/soundscapes`
    ///   beside the executable's `bin/`, else `/usr/share/soundscaped/soundscapes`;
    /// - user: `$XDG_DATA_HOME/soundscaped/soundscapes` (default `~/.local/share/...`).
    public static func standard(extra: [String], environment: [String: String],
                                executablePath: String) -> Self {
        Self(builtin: builtinDirectory(executablePath: executablePath), extra: extra,
             user: userDirectory(environment: environment))
    }

    public static func userDirectory(environment: [String: String]) -> String? {
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return dataHome + "/soundscaped/soundscapes"
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/share/soundscaped/soundscapes"
    }

    static func builtinDirectory(executablePath: String) -> String? {
        let fileManager = FileManager.default
        func hasManifest(_ url: URL) -> Bool {
            fileManager.fileExists(atPath: url.appendingPathComponent("manifest.json").path)
        }
        let executable = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = directory.appendingPathComponent("soundscapes")
            if hasManifest(candidate) { return candidate.path }
            directory.deleteLastPathComponent()
        }
        let prefixShare = executable.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("share/soundscaped/soundscapes")
        if hasManifest(prefixShare) { return prefixShare.path }
        let system = URL(fileURLWithPath: "/usr/share/soundscaped/soundscapes")
        return hasManifest(system) ? system.path : nil
    }
}
