// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "soundscaped",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "soundscaped", targets: ["soundscaped"]),
        .executable(name: "soundscapectl", targets: ["soundscapectl"]),
        .executable(name: "soundscaped-desktop", targets: ["soundscaped-desktop"]),
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
        // sd-bus, for the desktop companion only (the daemon stays D-Bus-free).
        .systemLibrary(
            name: "CSystemdBus",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(
            name: "CSoundscapeShims",
            dependencies: ["CPipeWire"]
        ),
        .target(name: "CSoundscapeSystem"),
        // What `soundscapectl import` decodes, resamples, measures and encodes with.
        .systemLibrary(
            name: "CSoundscapeCodecs",
            pkgConfig: "libopusenc",
            providers: [.apt(["libsndfile1-dev", "libsoxr-dev", "libebur128-dev", "libopusenc-dev"])]
        ),
        // libopusenc's and libseccomp's variadic calls for the import worker (its sandbox).
        .target(name: "CSoundscapeImport", dependencies: ["CSoundscapeCodecs"], linkerSettings: [.linkedLibrary("seccomp")]),
        // libseccomp, for the two filters the daemon applies itself (Support/Hardening.swift).
        .target(name: "CSoundscapeSandbox", linkerSettings: [.linkedLibrary("seccomp")]),

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
        // `soundscapectl import`: the loop, the loudness (pure, in Loop/) and the sandboxed worker.
        .target(
            name: "SoundscapeImport",
            dependencies: ["SoundscapeCore", "SoundscapeSystem", "SoundscapeLibrary", "CSoundscapeCodecs", "CSoundscapeImport", "COpusFile"]
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
                "CSoundscapeSystem", "CSoundscapeSandbox",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The built-in HTTP health check's codec (signer-health-url).
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The desktop companion: MPRIS and notifications on the session bus, a varlink client of the daemon.
        .target(
            name: "SoundscapeDesktop",
            dependencies: ["SoundscapeCore", "SoundscapeSystem", "CSystemdBus", .product(name: "Logging", package: "swift-log")]
        ),

        // MARK: Executables
        .executableTarget(
            name: "soundscaped",
            dependencies: [
                "SoundscapeDaemon", "SoundscapeAudio", "SoundscapeCore", "SoundscapeSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
            // The release link that makes the daemon small (a code layout, lld, no exported symbols,
            // static libstdc++) is packaging/release/build's business: no unsafe flags here, and a
            // plain `swift build -c release` builds a working daemon.
        ),
        .executableTarget(
            name: "soundscapectl",
            dependencies: [
                "SoundscapeCore", "SoundscapeSystem", "Varlink", "SoundscapeLibrary", "SoundscapeImport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "soundscaped-desktop",
            dependencies: [
                "SoundscapeDesktop", "SoundscapeCore", "SoundscapeSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // libFuzzer targets for every parser that takes outside bytes; scripts/fuzz builds and runs them.
        .executableTarget(
            name: "soundscape-fuzz",
            dependencies: [
                "Varlink", "SoundscapeCore", "SoundscapeAudio", "SoundscapeLibrary", "SoundscapeDaemon", "SoundscapeImport",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Fuzz/SoundscapeFuzz"),

        .executableTarget(
            name: "soundscape-bench",
            dependencies: [
                "TestSupport", "Varlink", "SoundscapeSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/SoundscapeBench"),

        // MARK: Tests
        .testTarget(name: "SoundscapeCoreTests", dependencies: ["SoundscapeCore", "TestSupport"]),
        .testTarget(name: "SoundscapeSystemTests", dependencies: ["SoundscapeSystem"]),
        .testTarget(name: "SoundscapeDesktopTests", dependencies: ["SoundscapeDesktop", "SoundscapeCore"]),
        .testTarget(
            name: "VarlinkTests",
            dependencies: [
                "Varlink", "TestSupport", "SoundscapeSystem",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(name: "SoundscapeStoreTests", dependencies: ["SoundscapeStore", "SoundscapeCore", "SoundscapeSystem"], exclude: ["Fixtures"]),
        .testTarget(
            name: "SoundscapeAudioTests",
            dependencies: ["SoundscapeAudio", "SoundscapeLibrary", "SoundscapeSystem", "TestSupport", "CAllocationCounter"]),
        // Counts allocations on the real-time thread (RealTimeAllocationTests); it replaces malloc, so tests only.
        .target(name: "CAllocationCounter", dependencies: ["CSoundscapeShims"], path: "Tests/CAllocationCounter"),
        .testTarget(name: "SoundscapeImportTests", dependencies: ["SoundscapeImport", "SoundscapeLibrary", "SoundscapeCore"]),
        .testTarget(name: "SoundscapeLibraryTests", dependencies: ["SoundscapeLibrary", "SoundscapeCore", "SoundscapeSystem"]),
        .testTarget(name: "SystemdTests", dependencies: ["SoundscapeDaemon", "SoundscapeSystem"]),
        .testTarget(
            name: "SoundscapeDaemonTests",
            dependencies: [
                "SoundscapeDaemon", "SoundscapeCore", "SoundscapeSystem", "SoundscapeAudio", "SoundscapeLibrary",
                "SoundscapeStore", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ], exclude: ["Fixtures"]),
        .target(name: "TestSupport", dependencies: ["SoundscapeCore", "SoundscapeSystem", "Varlink"], path: "Tests/TestSupport"),
        .testTarget(
            name: "EndToEndTests", dependencies: ["TestSupport", "SoundscapeCore", "SoundscapeSystem", "Varlink"],
            exclude: ["Fixtures"]),
    ]
)
