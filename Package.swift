// swift-tools-version:6.0
import Foundation
import PackageDescription

/// Absolute, because the linker does not run in the package directory.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path

let package = Package(
    name: "soundscaped",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "soundscaped", targets: ["soundscaped"]),
        .executable(name: "soundscapectl", targets: ["soundscapectl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    ],
    targets: [
        // MARK: C libraries and shims
        .systemLibrary(
            name: "CPipeWire",
            pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "COpusFile",
            pkgConfig: "opusfile",
            providers: [.apt(["libopusfile-dev"])]
        ),
        .target(
            name: "CSoundscapeShims",
            dependencies: ["CPipeWire"]
        ),
        .target(name: "CSoundscapeSystem"),

        // MARK: Pure logic (no I/O)
        .target(name: "SoundscapeCore"),

        // MARK: The operating system: files, threads, processes (daemon, CLI and tests alike)
        .target(name: "SoundscapeSystem", dependencies: ["SoundscapeCore", "CSoundscapeSystem"]),

        // MARK: Subsystems
        .target(
            name: "SoundscapeAudio",
            dependencies: [
                "SoundscapeCore", "SoundscapeSystem", "CPipeWire", "COpusFile", "CSoundscapeShims", "CSoundscapeSystem",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "SoundscapeLibrary",
            dependencies: ["SoundscapeCore", "SoundscapeSystem"]
        ),
        .target(
            name: "SoundscapeStore",
            dependencies: ["SoundscapeCore", "SoundscapeSystem", "CSQLite"]
        ),
        .target(
            name: "Varlink",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "SoundscapeDaemon",
            dependencies: [
                "SoundscapeCore", "SoundscapeSystem", "SoundscapeAudio", "SoundscapeLibrary", "SoundscapeStore", "Varlink",
                "CSoundscapeSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        // MARK: Executables
        .executableTarget(
            name: "soundscaped",
            dependencies: [
                "SoundscapeDaemon", "SoundscapeAudio", "SoundscapeCore", "SoundscapeSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [
                // A smaller resident set for a process that runs for days (numbers in docs/performance.md):
                // - no exported symbols (packaging/soundscaped.exports);
                // - lld, so that the functions the daemon runs are laid out together
                //   (packaging/soundscaped.order and, for code without a symbol,
                //   packaging/soundscaped-unnamed.ld, both made by scripts/order-file), and relative
                //   relocations packed (DT_RELR, glibc 2.36 = Debian 12);
                // - libstdc++ linked statically (packaging/link/libstdc++.so says how).
                .unsafeFlags([
                    "-use-ld=lld",
                    "-L\(packageRoot)/packaging/link",
                    "-Xlinker", "--version-script=\(packageRoot)/packaging/soundscaped.exports",
                    "-Xlinker", "--symbol-ordering-file=\(packageRoot)/packaging/soundscaped.order",
                    "-Xlinker", "--no-warn-symbol-ordering",
                    "-Xlinker", "-T", "-Xlinker", "\(packageRoot)/packaging/soundscaped-unnamed.ld",
                    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                ], .when(platforms: [.linux], configuration: .release)),
            ]
        ),
        .executableTarget(
            name: "soundscapectl",
            dependencies: [
                "SoundscapeCore", "SoundscapeSystem", "Varlink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        .executableTarget(name: "soundscape-bench", dependencies: ["TestSupport", "Varlink", .product(name: "NIOPosix", package: "swift-nio")], path: "Benchmarks/SoundscapeBench"),

        // MARK: Tests
        .testTarget(name: "SoundscapeCoreTests", dependencies: ["SoundscapeCore"]),
        .testTarget(name: "SoundscapeSystemTests", dependencies: ["SoundscapeSystem"]),
        .testTarget(name: "VarlinkTests", dependencies: [
            "Varlink", "TestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        .testTarget(name: "SoundscapeStoreTests", dependencies: ["SoundscapeStore", "SoundscapeSystem"]),
        .testTarget(name: "SoundscapeAudioTests", dependencies: ["SoundscapeAudio", "SoundscapeLibrary", "SoundscapeSystem"]),
        .testTarget(name: "SoundscapeLibraryTests", dependencies: ["SoundscapeLibrary", "SoundscapeCore", "SoundscapeSystem"]),
        .testTarget(name: "SystemdTests", dependencies: ["SoundscapeDaemon"]),
        .testTarget(name: "SoundscapeDaemonTests", dependencies: [
            "SoundscapeDaemon", "SoundscapeCore", "SoundscapeSystem", "SoundscapeAudio", "SoundscapeLibrary",
            "SoundscapeStore", "TestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .target(name: "TestSupport", dependencies: ["SoundscapeCore", "SoundscapeSystem"], path: "Tests/TestSupport"),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "SoundscapeCore", "Varlink"],
                    exclude: ["Fixtures"]),
    ]
)
