import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The test graphs never touch real hardware: WirePlumber gets
/// scripts/no-hardware (0.4's Lua files and 0.5's fragment; scripts/check-wireplumber-05
/// proves the fragment on Debian 13), and a graph that has a device anyway
/// fails, at start and when `withGraph`'s body returns. This machine has no
/// sound card, so a device is made by hand to show the check fails.
@Suite("Test graphs keep away from hardware", .serialized, .timeLimit(.minutes(1)))
struct HarnessIsolationTests {
    /// A device as a monitor makes one, held for as long as the returned process runs:
    /// the ALSA enumerator, which needs no sound card to exist.
    static func holdDevice(in graph: PipeWireGraph) throws -> ChildProcess {
        let holder = try graph.spawn(
            "pw-cli",
            [
                "-m", "create-device", "spa-device-factory",
                "{ factory.name=api.alsa.enum.udev }",
            ], name: "device-holder")
        try waitUntil(timeout: .seconds(5), "the hand-made device to appear") { !(try graph.snapshot().devices.isEmpty) }
        return holder
    }

    @Test("WirePlumber gets the no-hardware configuration for both versions, and the graph has no device")
    func configured() throws {
        try PipeWireGraph.withGraph { graph in
            let config = graph.directory.appendingPathComponent("config/wireplumber")
            for file in [
                "main.lua.d/60-soundscape-no-hardware.lua", "bluetooth.lua.d/60-soundscape-no-hardware.lua",
                "wireplumber.conf.d/99-soundscape-no-hardware.conf",
            ] {
                #expect(FileManager.default.fileExists(atPath: config.appendingPathComponent(file).path), "\(file)")
            }
            let fragment = try String(
                contentsOf: config.appendingPathComponent("wireplumber.conf.d/99-soundscape-no-hardware.conf"),
                encoding: .utf8)
            for feature in ["hardware.audio", "hardware.bluetooth", "hardware.video-capture"] {
                #expect(fragment.contains("\(feature) = disabled"), "\(feature)")
            }
            #expect(try graph.snapshot().devices.isEmpty)
            try graph.requireNoDevices()
        }
    }

    @Test("a device in the graph fails the check, naming the device")
    func aDeviceFailsTheCheck() throws {
        try PipeWireGraph.withGraph { graph in
            let holder = try Self.holdDevice(in: graph)
            let error = #expect(throws: HarnessError.self) { try graph.requireNoDevices() }
            #expect(
                String(describing: error).contains("alsa-udev") || String(describing: error).contains("api.alsa.enum.udev"),
                "\(String(describing: error))")
            holder.signal(SIGTERM)
            try waitUntil(timeout: .seconds(5), "the device to go") { try graph.snapshot().devices.isEmpty }
            try graph.requireNoDevices()
        }
    }

    @Test("withGraph fails a test whose graph has a device when its body returns")
    func withGraphChecksAtTheEnd() throws {
        let error = #expect(throws: HarnessError.self) {
            try PipeWireGraph.withGraph(keepOnFailure: false) { graph in
                _ = try Self.holdDevice(in: graph)
            }
        }
        #expect(String(describing: error).contains("device"), "\(String(describing: error))")
    }
}
