import SoundscapeCore
import SoundscapeSystem

extension SoundscapeCatalog.Locations {
    /// Where soundscapes are looked for by default:
    /// - built-in: a `soundscapes/` folder with a manifest found by walking up from
    ///   the executable (a build run from the checkout), else `<prefix>/share/soundscaped/soundscapes`
    ///   beside the executable's `bin/`, else `/usr/share/soundscaped/soundscapes`;
    /// - user: `$XDG_DATA_HOME/soundscaped/soundscapes` (default `~/.local/share/...`).
    public static func standard(
        extra: [String], environment: [String: String],
        executablePath: String
    ) -> Self {
        Self(
            builtin: builtinDirectory(executablePath: executablePath), extra: extra,
            user: userDirectory(environment: environment))
    }

    /// Where the signer-down cue is: beside the built-in soundscapes, in `cues/`
    /// (a directory the catalog does not list).
    public var signerDownCuePath: String? {
        builtin.map { FilePaths.join($0, "cues/signer-down.opus") }
    }

    public static func userDirectory(environment: [String: String]) -> String? {
        if let dataHome = environment["XDG_DATA_HOME"], FilePaths.isAbsolute(dataHome) {
            return dataHome + "/soundscaped/soundscapes"
        }
        guard let home = environment["HOME"], FilePaths.isAbsolute(home) else { return nil }
        return home + "/.local/share/soundscaped/soundscapes"
    }

    static func builtinDirectory(executablePath: String) -> String? {
        func hasManifest(_ directory: String) -> Bool {
            FileSystem.exists(FilePaths.join(directory, "manifest.json"))
        }
        let executable = FileSystem.resolved(FileSystem.absolute(executablePath))
        var directory = FilePaths.parent(executable)
        for _ in 0..<6 {
            let candidate = FilePaths.join(directory, "soundscapes")
            if hasManifest(candidate) { return candidate }
            directory = FilePaths.parent(directory)
        }
        let prefixShare = FilePaths.join(FilePaths.parent(FilePaths.parent(executable)), "share/soundscaped/soundscapes")
        if hasManifest(prefixShare) { return prefixShare }
        let system = "/usr/share/soundscaped/soundscapes"
        return hasManifest(system) ? system : nil
    }
}
