import Foundation
import Testing
@testable import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Fast checks of the harness building blocks that need no PipeWire.
@Suite("Test-support building blocks", .timeLimit(.minutes(1)))
struct HarnessSupportTests {
    // MARK: WAV

    @Test func wavRoundTripsInt16AndFloat() throws {
        let clip = AudioClip.sine(frequency: 1000, amplitude: 0.5, seconds: 0.1)
        let f32 = try WAVFile.parse(WAVFile.encode(clip, format: .float32))
        #expect(f32 == clip)
        let s16 = try WAVFile.parse(WAVFile.encode(clip, format: .int16))
        #expect(s16.sampleRate == 48000 && s16.channels == 2 && s16.frameCount == clip.frameCount)
        #expect(zip(s16.samples, clip.samples).allSatisfy { abs($0 - $1) < 1.0 / 16384 })
    }

    /// Builds a WAV by hand: unknown chunk before fmt, a given data size field, trailing bytes.
    private func handMadeWAV(dataSizeField: UInt32, samples: [Float], extensible: Bool = false) -> Data {
        var d = Data()
        func put32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func put16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); put32(0xFFFF_FFFF)
        d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("junk".utf8)); put32(3); d.append(contentsOf: [1, 2, 3, 0])  // odd size + pad
        d.append(contentsOf: Array("fmt ".utf8))
        put32(extensible ? 40 : 16)
        put16(extensible ? 0xFFFE : 3); put16(2); put32(48000); put32(48000 * 8); put16(8); put16(32)
        if extensible {
            put16(22); put16(32); put32(3)
            put16(3); d.append(contentsOf: [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
        }
        d.append(contentsOf: Array("data".utf8)); put32(dataSizeField)
        for s in samples { put32(s.bitPattern) }
        return d
    }

    @Test(arguments: [UInt32(0), 0xFFFF_FFFF, 1_000_000])
    func wavToleratesUnfinalisedDataSize(sizeField: UInt32) throws {
        let samples: [Float] = [0.1, -0.1, 0.2, -0.2, 0.3, -0.3]
        var data = handMadeWAV(dataSizeField: sizeField, samples: samples)
        data.append(contentsOf: [0x7F, 0x7F])  // a partial frame at the end is dropped
        let clip = try WAVFile.parse(data)
        #expect(clip.channels == 2 && clip.sampleRate == 48000)
        #expect(clip.samples == samples)
    }

    @Test func wavReadsExtensibleFloat() throws {
        let samples: [Float] = [0.5, -0.5, 0.25, -0.25]
        let clip = try WAVFile.parse(handMadeWAV(dataSizeField: 16, samples: samples, extensible: true))
        #expect(clip.samples == samples)
    }

    @Test func wavRejectsGarbage() {
        #expect(throws: HarnessError.self) { try WAVFile.parse(Data("not a wav file at all".utf8)) }
    }

    // MARK: Analysis

    @Test func analysisFindsLevelsGapsAndSteps() {
        let silence = AudioClip.silence(seconds: 0.5)
        let tone = AudioClip.sine(frequency: 440, amplitude: 0.5, seconds: 1)
        let clip = AudioClip(
            sampleRate: 48000, channels: 2, samples: silence.samples + tone.samples + silence.samples)

        #expect(abs(clip.duration - 2) < 1e-9)
        #expect(abs(clip.rmsDB(from: 0.6, to: 1.4) - (-9.03)) < 0.05)
        #expect(clip.rmsDB(from: 0, to: 0.5) == -.infinity)
        #expect(abs(clip.peak - 0.5) < 0.001)
        #expect(abs((clip.firstNonSilentTime(thresholdDB: -60) ?? 0) - 0.5) < 0.001)
        #expect(abs((clip.lastNonSilentTime(thresholdDB: -60) ?? 0) - 1.5) < 0.001)
        #expect(abs((clip.estimatedFrequency(from: 0.6, to: 1.4) ?? 0) - 440) < 1)

        let stretches = clip.silentStretches(thresholdDB: -60, minMs: 50)
        #expect(stretches.count == 2)
        #expect(abs(stretches[0].lowerBound) < 1e-9 && abs(stretches[0].upperBound - 0.5) < 0.006)
        #expect(abs(stretches[1].lowerBound - 1.5) < 0.006 && abs(stretches[1].upperBound - 2.0) < 1e-9)
        #expect(clip.windowedRMS(windowMs: 100).count == 20)

        #expect(tone.maxStep < 0.03)
        // A 20 ms dropout in the middle is found, and its hard edges show up as steps.
        var gappy = tone
        for i in (gappy.frameIndex(at: 0.5) * 2)..<(gappy.frameIndex(at: 0.52) * 2) { gappy.samples[i] = 0 }
        let gaps = gappy.silentStretches(thresholdDB: -60, minMs: 5)
        #expect(gaps.count == 1)
        #expect(gaps.first.map { $0.lowerBound >= 0.495 && $0.upperBound <= 0.525 } == true)
        #expect(gappy.maxStep > 0.1)
    }

    // MARK: Processes

    @Test func childProcessStreamsLines() throws {
        let child = try ChildProcess.start("/bin/sh", ["-c", "echo one; sleep 0.2; echo two; echo err >&2; printf three"])
        #expect(child.nextLine(timeout: .seconds(5)) == "one")
        #expect(child.nextLine(timeout: .seconds(5)) == "two")
        #expect(child.nextLine(timeout: .seconds(5)) == "three")
        #expect(child.nextLine(timeout: .seconds(1)) == nil)
        #expect(child.waitForExit(timeout: .seconds(5)) == 0)
        // Stderr is read by a thread of its own: its end, not the exit, says it is all there.
        child.waitForOutputDrained(timeout: .seconds(5))
        #expect(child.stderrText == "err\n")
    }

    @Test func childProcessNextLineTimesOutAndSignals() throws {
        let child = try ChildProcess.start("sleep", ["30"])
        let clock = ContinuousClock()
        let t0 = clock.now
        #expect(child.nextLine(timeout: .milliseconds(200)) == nil)
        #expect(clock.now - t0 < .seconds(2))
        #expect(child.isRunning)
        child.signal(SIGTERM)
        #expect(child.waitForExit(timeout: .seconds(5)) == 128 + SIGTERM)
        #expect(child.exitStatus == .signaled(SIGTERM))
    }

    @Test func runCapturesOutputAndStatus() throws {
        let r = try ChildProcess.run(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(r.status == 3 && r.stdout == "out\n" && r.stderr == "err\n")
        #expect(throws: HarnessError.self) { try r.requireSuccess() }
        #expect(throws: HarnessError.self) { try ChildProcess.run(["sleep", "10"], timeout: .milliseconds(200)) }
    }

    @Test func chattyChildNeverBlocks() throws {
        // 8 MB on stdout, far more than a pipe buffer.
        let r = try ChildProcess.run(["/bin/sh", "-c", "head -c 8000000 /dev/zero | tr '\\0' x"], timeout: .seconds(20))
        #expect(r.succeeded && r.stdout.utf8.count == 8_000_000)
    }

    @Test func missingToolNamesTheAptPackage() {
        do {
            try ExternalTools.require(["wireplumber", "definitely-not-a-tool"], searchPath: "/nonexistent")
            Issue.record("expected an error")
        } catch {
            let text = String(describing: error)
            #expect(text.contains("apt package wireplumber"))
            #expect(text.contains("definitely-not-a-tool"))
        }
    }

    @Test func waitUntilReportsMessageOnTimeout() {
        do {
            try waitUntil(timeout: .milliseconds(100), "the impossible") { false }
            Issue.record("expected a timeout")
        } catch {
            #expect(String(describing: error).contains("the impossible"))
        }
    }

    @Test func waitUntilWorksFromAsyncCode() async throws {
        let start = ContinuousClock.now
        let elapsed = try await waitUntil(timeout: .seconds(2), pollInterval: .milliseconds(10), "time to pass") {
            await Task.yield()  // an async condition selects the async overload
            return ContinuousClock.now - start > .milliseconds(50)
        }
        #expect(elapsed >= .milliseconds(50))
    }

    @Test func locatesProductsAndPackageRoot() throws {
        let root = ProductLocator.packageRoot
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path))
        #expect(ProductLocator.soundscapesDirectory.lastPathComponent == "soundscapes")
        let daemon = try ProductLocator.soundscaped()
        let ctl = try ProductLocator.soundscapectl()
        #expect(FileManager.default.isExecutableFile(atPath: daemon.path))
        #expect(FileManager.default.isExecutableFile(atPath: ctl.path))
    }

    // MARK: pw-dump

    /// `pw-dump` parsed through the varlink module's `JSONValue`: ids and ports as integers,
    /// properties flattened to strings, and the default sink in both of its metadata forms.
    @Test func parsesAPwDump() throws {
        let dump = #"""
            [
              {"id": 31, "type": "PipeWire:Interface:Client",
               "info": {"props": {"application.process.id": 4242, "application.name": "soundscaped"}}},
              {"id": 40, "type": "PipeWire:Interface:Node",
               "info": {"state": "running", "props": {"node.name": "speaker", "media.class": "Audio/Sink",
                        "client.id": 31, "node.rate": 0.5, "node.pause-on-idle": false, "object.serial": 1e3,
                        "audio.position": ["FL", "FR"]}}},
              {"id": 41, "type": "PipeWire:Interface:Link",
               "info": {"output-node-id": 42, "output-port-id": 7, "input-node-id": 40, "input-port-id": 8, "state": "active"}},
              {"id": 0, "type": "PipeWire:Interface:Metadata", "props": {"metadata.name": "default"},
               "metadata": [
                 {"subject": 0, "key": "default.audio.sink", "type": "Spa:String:JSON", "value": {"name": "speaker"}},
                 {"subject": 0, "key": "default.configured.audio.sink", "value": "{ \"name\": \"headset\" }"}]},
              {"type": "PipeWire:Interface:Node"},
              {"id": 50.5, "type": "PipeWire:Interface:Node"}
            ]
            """#
        let snapshot = try PipeWireGraph.Snapshot(pwDumpJSON: Data(dump.utf8))
        #expect(snapshot.nodes.map(\.id) == [40], "an object without an integral id is skipped")
        let speaker = try #require(snapshot.node(named: "speaker"))
        #expect(speaker.state == "running" && speaker.clientID == 31)
        #expect(speaker.props["node.rate"] == "0.5")
        #expect(speaker.props["node.pause-on-idle"] == "false")
        #expect(speaker.props["object.serial"] == "1000")
        #expect(speaker.props["audio.position"] == #"["FL","FR"]"#)
        #expect(snapshot.sinks.map(\.id) == [40])
        #expect(snapshot.nodes(ofProcess: 4242).map(\.id) == [40])
        #expect(snapshot.links.map(\.description) == ["Link(41: 42.7 -> 40.8, active)"])
        #expect(snapshot.defaultSink == "speaker")
        #expect(snapshot.configuredDefaultSink == "headset", "metadata JSON stored as a string")
        #expect(snapshot.rawObjects.count == 6)
        #expect(
            PipeWireGraph.metadataName(
                inMonitorLine: #"update: id:0 key:'default.audio.sink' value:'{"name":"usb"}' type:'Spa:String:JSON'"#)
                == "usb")
    }
}
