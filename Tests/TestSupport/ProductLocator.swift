import Foundation

/// Finds the built executables and the package root.
///
/// The executables are looked up in `$SOUNDSCAPED_BIN_DIR` if set, otherwise
/// in the SwiftPM products directory that holds the running test binary
/// (e.g. `.build/debug`, `.build-harness/x86_64-unknown-linux-gnu/debug`).
/// `swift test` and `swift build --build-tests` build the executables there.
public enum ProductLocator {
    public static let binDirectoryVariable = "SOUNDSCAPED_BIN_DIR"

    /// Directory holding `soundscaped` and `soundscapectl`.
    public static func binDirectory() throws -> URL {
        let fm = FileManager.default
        if let override = ProcessInfo.processInfo.environment[binDirectoryVariable], !override.isEmpty {
            let url = URL(fileURLWithPath: override, isDirectory: true)
            guard fm.isExecutableFile(atPath: url.appendingPathComponent("soundscaped").path) else {
                throw HarnessError("\(binDirectoryVariable)=\(override) does not contain an executable 'soundscaped'")
            }
            return url
        }
        let candidates = candidateDirectories()
        for dir in candidates where fm.isExecutableFile(atPath: dir.appendingPathComponent("soundscaped").path) {
            return dir
        }
        throw HarnessError(
            "Cannot find the built 'soundscaped' executable next to the test binary (looked in: "
                + candidates.map(\.path).joined(separator: ", ")
                + "). Build with `swift build --build-tests` (same --scratch-path) or set \(binDirectoryVariable).")
    }

    /// Path of a product built by this package.
    public static func executable(named name: String) throws -> URL {
        let url = try binDirectory().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw HarnessError("Product '\(name)' not found in \(url.deletingLastPathComponent().path)")
        }
        return url
    }

    public static func soundscaped() throws -> URL { try executable(named: "soundscaped") }

    public static func soundscapectl() throws -> URL { try executable(named: "soundscapectl") }

    public static func soundscapedDesktop() throws -> URL { try executable(named: "soundscaped-desktop") }

    /// Directories that may be the products dir: the test binary's directory
    /// and its ancestors up to three levels (covers macOS `.xctest` bundles).
    static func candidateDirectories() -> [URL] {
        var starts: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: exe))
        }
        if let exe = Bundle.main.executableURL { starts.append(exe) }
        starts.append(URL(fileURLWithPath: CommandLine.arguments[0]))
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            starts.append(bundle.bundleURL)
        }
        var result: [URL] = []
        for start in starts {
            var dir = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let std = dir.standardizedFileURL
                if !result.contains(std) { result.append(std) }
                dir = dir.deletingLastPathComponent()
            }
        }
        return result
    }

    /// Root of the Swift package (the directory with Package.swift), found by
    /// walking up from this source file, falling back to the working directory.
    public static let packageRoot: URL = {
        func search(from start: URL) -> URL? {
            var dir = start
            while dir.path != "/" {
                if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
                    return dir
                }
                dir = dir.deletingLastPathComponent()
            }
            return nil
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return search(from: source) ?? search(from: cwd) ?? cwd
    }()

    /// `<package root>/soundscapes`.
    public static var soundscapesDirectory: URL {
        packageRoot.appendingPathComponent("soundscapes", isDirectory: true)
    }
}
