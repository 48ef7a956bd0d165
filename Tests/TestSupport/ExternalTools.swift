import Foundation

/// Lookup of the external programs the harness drives, with the Debian/Ubuntu
/// package that provides each one so a missing tool fails with an actionable
/// message instead of a skipped test.
public enum ExternalTools {
    /// Tool name -> apt package (Debian 12 / Ubuntu naming).
    public static let aptPackages: [String: String] = [
        "pipewire": "pipewire-bin",
        "pw-cli": "pipewire-bin",
        "pw-dump": "pipewire-bin",
        "pw-metadata": "pipewire-bin",
        "pw-record": "pipewire-bin",
        "pw-play": "pipewire-bin",
        "pw-cat": "pipewire-bin",
        "wireplumber": "wireplumber",
        "dbus-daemon": "dbus-daemon (or 'dbus' on older releases)",
        "sox": "sox",
        "gdb": "gdb",
    ]

    /// Tools a `PipeWireGraph` needs.
    public static let graphTools = ["dbus-daemon", "pipewire", "wireplumber", "pw-cli", "pw-dump", "pw-metadata"]

    static let defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// The test process's PATH (or a sane default).
    public static var searchPath: String {
        ProcessInfo.processInfo.environment["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultPath
    }

    /// Absolute path of `tool` found in `path` (default: the test process's PATH), or nil.
    public static func path(of tool: String, searchPath path: String? = nil) -> String? {
        if tool.contains("/") {
            return FileManager.default.isExecutableFile(atPath: tool) ? tool : nil
        }
        for dir in (path ?? searchPath).split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(tool)"
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDir), !isDir.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }

    /// Throws one error naming every missing tool and the apt package to install.
    public static func require(_ tools: [String], searchPath path: String? = nil) throws {
        let missing = tools.filter { self.path(of: $0, searchPath: path) == nil }
        guard !missing.isEmpty else { return }
        throw missingToolsError(missing, searchPath: path ?? searchPath)
    }

    static func missingToolsError(_ missing: [String], searchPath: String) -> HarnessError {
        let lines = missing.map { tool in
            "  - '\(tool)': install the apt package \(aptPackages[tool] ?? "providing it")"
        }
        var packages = Set(missing.compactMap { aptPackages[$0]?.split(separator: " ").first.map(String.init) })
        if missing.contains("pipewire") { packages.insert("pipewire") }
        let hint = packages.isEmpty ? "" : "\n  e.g. apt-get install \(packages.sorted().joined(separator: " "))"
        return HarnessError(
            "Required external tool(s) not found in PATH (\(searchPath)):\n\(lines.joined(separator: "\n"))\(hint)")
    }

    static func resolveExecutable(_ executable: String, environment: [String: String]?) throws -> URL {
        let path = environment?["PATH"] ?? searchPath
        guard let found = self.path(of: executable, searchPath: path) else {
            if executable.contains("/") {
                throw HarnessError("Executable not found or not executable: \(executable)")
            }
            throw missingToolsError([executable], searchPath: path)
        }
        return URL(fileURLWithPath: found)
    }
}
