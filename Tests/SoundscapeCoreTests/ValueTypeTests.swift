import Foundation
import Testing
import SoundscapeCore

@Suite struct SoundscapeIDTests {
    @Test(arguments: ["ocean-waves", "My Loop 2", "été", "rain_2 (night), v1.0+'x'", "a", "x..y"])
    func acceptsSafeNames(name: String) {
        #expect(SoundscapeID(name)?.rawValue == name)
    }

    @Test(arguments: [
        "", "../x", "a/b", "/etc", ".hidden", ".", "..", "-x", "--help",
        // A dot or hyphen before a combining mark is one Character, and still the first byte.
        ".\u{306}hidden", "-\u{306}x", "a/\u{306}b",
        "tab\there", "new\nline", "nul\u{0}", "bell\u{7}", "del\u{7F}", "c1\u{85}",
        "back\\slash", "star*", "dollar$", "colon:", "quote\"",
    ])
    func refusesUnsafeNames(name: String) {
        #expect(SoundscapeID(name) == nil)
    }

    @Test func lengthLimitIs128Bytes() {
        #expect(SoundscapeID(String(repeating: "a", count: 128)) != nil)
        #expect(SoundscapeID(String(repeating: "a", count: 129)) == nil)
        // The limit counts UTF-8 bytes: 65 × "é" is 130 bytes.
        #expect(SoundscapeID(String(repeating: "é", count: 64)) != nil)
        #expect(SoundscapeID(String(repeating: "é", count: 65)) == nil)
    }

    @Test func codableRoundTripsAndRefusesInvalidIDs() throws {
        let id = SoundscapeID("ocean-waves")!
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["ocean-waves"]"#)
        #expect(try JSONDecoder().decode([SoundscapeID].self, from: data) == [id])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([SoundscapeID].self, from: Data(#"["..\/x"]"#.utf8))
        }
    }
}

@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (951_782_400_123, "2000-02-29T00:00:00.123Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-86_400_000, "1969-12-31T00:00:00.000Z"),
        (-86_400_001, "1969-12-30T23:59:59.999Z"),
        (-2_203_891_200_000, "1900-03-01T00:00:00.000Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
        (1_709_210_096_789, "2024-02-29T12:34:56.789Z"),
        (1_795_208_645_123, "2026-11-20T21:04:05.123Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ])
    func formatsKnownInstants(millis: Int64, text: String) {
        #expect(Timestamp(millisecondsSince1970: millis).description == text)
        #expect(Timestamp(rfc3339: text)?.millisecondsSince1970 == millis)
    }

    @Test func parseAndFormatRoundTripOverManyValues() {
        var generator = SplitMix64(seed: 0x5EED)
        let lower: Int64 = -62_135_596_800_000  // 0001-01-01
        let upper: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999
        var failures: [String] = []
        for _ in 0..<20_000 {
            let millis = Int64.random(in: lower...upper, using: &generator)
            let text = Timestamp(millisecondsSince1970: millis).description
            if text.utf8.count != 24 || Timestamp(rfc3339: text)?.millisecondsSince1970 != millis {
                failures.append("\(millis) → \(text)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func everyMidnightFrom1896To2104RoundTripsInOrder() {
        // Covers 1900 and 2100 (not leap years) and 2000 (a leap year).
        var previous = ""
        var failures: [String] = []
        for day in Int64(-27_000)...Int64(49_000) {
            let millis = day * 86_400_000
            let text = Timestamp(millisecondsSince1970: millis).description
            if !text.hasSuffix("T00:00:00.000Z") || Timestamp(rfc3339: text)?.millisecondsSince1970 != millis
                || !(previous < text)
            {
                failures.append(text)
            }
            previous = text
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(
            Timestamp(rfc3339: "1900-02-28T00:00:00Z")!.millisecondsSince1970 + 86_400_000
                == Timestamp(rfc3339: "1900-03-01T00:00:00Z")!.millisecondsSince1970)
        #expect(
            Timestamp(rfc3339: "2000-02-28T00:00:00Z")!.millisecondsSince1970 + 2 * 86_400_000
                == Timestamp(rfc3339: "2000-03-01T00:00:00Z")!.millisecondsSince1970)
    }

    @Test func parsesOptionalShortFractions() {
        #expect(Timestamp(rfc3339: "2000-02-29T00:00:00Z")?.millisecondsSince1970 == 951_782_400_000)
        #expect(Timestamp(rfc3339: "2000-02-29T00:00:00.1Z")?.millisecondsSince1970 == 951_782_400_100)
        #expect(Timestamp(rfc3339: "2000-02-29T00:00:00.12Z")?.millisecondsSince1970 == 951_782_400_120)
        #expect(Timestamp(rfc3339: "2000-02-29T00:00:00.123Z")?.millisecondsSince1970 == 951_782_400_123)
    }

    @Test(arguments: [
        "", "Z", "2026-11-20", "2026-11-20T21:04:05", "2026-11-20T21:04:05.123",
        "2026-11-20T21:04:05+01:00", "2026-11-20T21:04:05.Z", "2026-11-20T21:04:05XZ",
        "2026-11-20T21:04:05.12aZ", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-11-32T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-20T24:00:00Z",
        "2026-11-20T21:60:00Z", "2026-11-20T21:04:61Z", "2026-1a-20T21:04:05Z",
        "abcd-ef-ghTij:kl:mnZ", " 2026-11-20T21:04:05Z", "2026-11-20T21:04:05z",
    ])
    func parseRejectsMalformedStrings(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test(arguments: ["2026/11/20T21:04:05Z", "2026-11-20x21:04:05Z", "2026-11-20T21-04-05Z", "2026_11_20 21.04.05Z"])
    func parseRejectsWrongSeparators(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test(arguments: ["2026-02-31T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z"])
    func parseRejectsDaysThatDoNotExist(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test
    func parseRejectsNonDigitsAfterTheThirdFractionDigit() {
        #expect(Timestamp(rfc3339: "2026-11-20T21:04:05.1234xZ") == nil)
    }

    @Test func codableUsesTheRFC3339String() throws {
        let stamp = Timestamp(millisecondsSince1970: 951_782_400_123)
        let data = try JSONEncoder().encode([stamp])
        #expect(String(decoding: data, as: UTF8.self) == #"["2000-02-29T00:00:00.123Z"]"#)
        #expect(try JSONDecoder().decode([Timestamp].self, from: data) == [stamp])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Timestamp].self, from: Data(#"["yesterday"]"#.utf8))
        }
    }
}

@Suite struct BackoffTests {
    @Test func doublesFromOneSecondUpToTheSixtySecondCap() {
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
        #expect(backoff.current == nil)
        let delays = (0..<9).map { _ in backoff.next() }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(backoff.current == .seconds(60))
    }

    @Test func resetStartsAgainFromTheInitialDelay() {
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
        for _ in 0..<5 { _ = backoff.next() }
        backoff.reset()
        #expect(backoff.current == nil)
        #expect(backoff.next() == .seconds(1))
        #expect(backoff.next() == .seconds(2))
    }

    @Test func quarterSecondUpToTenSeconds() {
        var backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(10))
        let delays = (0..<8).map { _ in backoff.next() }
        #expect(delays == [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000].map { Duration.milliseconds($0) })
    }

    @Test func multiplierOfThree() {
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(20), multiplier: 3)
        #expect((0..<5).map { _ in backoff.next() } == [1, 3, 9, 20, 20].map { Duration.seconds($0) })
    }
}

@Suite struct DaemonPathsTests {
    @Test func socketPrefersExplicitThenVariableThenRuntimeDirectory() {
        let environment = [
            "SOUNDSCAPED_SOCKET": "/tmp/from-env.sock", "XDG_RUNTIME_DIR": "/run/user/1000",
        ]
        #expect(DaemonPaths.socket(explicit: "/tmp/explicit.sock", environment: environment) == "/tmp/explicit.sock")
        #expect(DaemonPaths.socket(explicit: nil, environment: environment) == "/tmp/from-env.sock")
        #expect(DaemonPaths.socket(explicit: "", environment: environment) == "/tmp/from-env.sock")
        #expect(
            DaemonPaths.socket(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
                == "/run/user/1000/soundscaped/control.sock")
        #expect(
            DaemonPaths.socket(explicit: nil, environment: ["SOUNDSCAPED_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/7"])
                == "/run/user/7/soundscaped/control.sock")
    }

    @Test func socketIsNilWithoutAnAbsoluteRuntimeDirectory() {
        #expect(DaemonPaths.socket(explicit: nil, environment: [:]) == nil)
        #expect(DaemonPaths.socket(explicit: nil, environment: ["XDG_RUNTIME_DIR": "relative/run"]) == nil)
        #expect(DaemonPaths.socket(explicit: nil, environment: ["XDG_RUNTIME_DIR": ""]) == nil)
    }

    @Test func stateDirectoryPrefersExplicitThenXDGStateHomeThenHome() {
        let environment = ["XDG_STATE_HOME": "/home/u/.state", "HOME": "/home/u"]
        #expect(DaemonPaths.stateDirectory(explicit: "/srv/state", environment: environment) == "/srv/state")
        #expect(DaemonPaths.stateDirectory(explicit: nil, environment: environment) == "/home/u/.state/soundscaped")
        #expect(DaemonPaths.stateDirectory(explicit: "", environment: environment) == "/home/u/.state/soundscaped")
        #expect(
            DaemonPaths.stateDirectory(explicit: nil, environment: ["HOME": "/home/u"])
                == "/home/u/.local/state/soundscaped")
    }

    @Test func stateDirectoryIgnoresARelativeXDGStateHome() {
        #expect(
            DaemonPaths.stateDirectory(explicit: nil, environment: ["XDG_STATE_HOME": "state", "HOME": "/home/u"])
                == "/home/u/.local/state/soundscaped")
        #expect(DaemonPaths.stateDirectory(explicit: nil, environment: ["XDG_STATE_HOME": "state"]) == nil)
        #expect(DaemonPaths.stateDirectory(explicit: nil, environment: [:]) == nil)
        #expect(DaemonPaths.stateDirectory(explicit: nil, environment: ["HOME": ""]) == nil)
    }
}

@Suite struct StatusAndEventCodingTests {
    let status = PlayerStatus(
        state: .playing, isPlaying: true, soundscape: SoundscapeID("rain")!,
        volume: Volume(percent: 40)!, route: nil, wantsPlaying: true)

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func statusWritesRouteAsExplicitNull() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(status), as: UTF8.self)
        #expect(
            text
                == #"{"cuePlaying":false,"ducked":false,"interruptions":[],"isPlaying":true,"keepAwake":null,"layers":[{"id":"rain","level":100}],"mix":null,"noSink":false,"route":null,"signer":null,"sleep":null,"soundscape":"rain","state":"playing","version":"\#(SoundscapedVersion.string)","volume":40,"wantsPlaying":true}"#
        )
        #expect(try JSONDecoder().decode(PlayerStatus.self, from: Data(text.utf8)) == status)
    }

    @Test func statusWithARouteRoundTrips() throws {
        var routed = status
        routed.route = "alsa_output.pci-0000_00_1f.3.analog-stereo"
        let data = try JSONEncoder().encode(routed)
        #expect(try object(data)["route"] as? String == routed.route)
        #expect(try JSONDecoder().decode(PlayerStatus.self, from: data) == routed)
    }

    @Test func noSinkIsWrittenAndAnOlderDaemonsStatusDecodesWithout() throws {
        var lost = status
        lost.noSink = true
        let data = try JSONEncoder().encode(lost)
        #expect(try object(data)["noSink"] as? Bool == true)
        #expect(try JSONDecoder().decode(PlayerStatus.self, from: data) == lost)
        let older = #"{"state":"recovering","isPlaying":false,"soundscape":"rain","volume":40,"route":null,"wantsPlaying":true}"#
        #expect(try JSONDecoder().decode(PlayerStatus.self, from: Data(older.utf8)).noSink == false)
    }

    @Test func theDaemonsVersionIsSentAndAnOlderDaemonsStatusHasNone() throws {
        #expect(status.version == SoundscapedVersion.string, "a status made in this build names this build")
        let data = try JSONEncoder().encode(status)
        #expect(try object(data)["version"] as? String == SoundscapedVersion.string)
        let older = #"{"state":"playing","isPlaying":true,"soundscape":"rain","volume":37,"route":null,"wantsPlaying":true}"#
        #expect(try JSONDecoder().decode(PlayerStatus.self, from: Data(older.utf8)).version == nil)
    }

    @Test func eventEncodesFlatAndDecodesBackEqual() throws {
        let event = PlayerEvent(
            seq: 42, time: Timestamp(millisecondsSince1970: 1_795_208_645_123), type: .player,
            reason: .decodeError, message: "cannot play 'x'", status: status)
        let data = try JSONEncoder().encode(event)
        let json = try object(data)
        #expect(
            Set(json.keys) == [
                "seq", "time", "type", "reason", "message",
                "state", "isPlaying", "soundscape", "layers", "mix", "volume", "route", "noSink", "wantsPlaying", "signer",
                "interruptions", "ducked", "cuePlaying", "keepAwake", "sleep", "version",
            ])
        #expect(json["seq"] as? Int == 42)
        #expect(json["time"] as? String == "2026-11-20T21:04:05.123Z")
        #expect(json["type"] as? String == "player")
        #expect(json["reason"] as? String == "decodeError")
        #expect(json["message"] as? String == "cannot play 'x'")
        #expect(json["state"] as? String == "playing")
        #expect(json["isPlaying"] as? Bool == true)
        #expect(json["soundscape"] as? String == "rain")
        #expect(json["volume"] as? Int == 40)
        #expect(json["route"] is NSNull)
        #expect(json["wantsPlaying"] as? Bool == true)
        #expect(try JSONDecoder().decode(PlayerEvent.self, from: data) == event)
    }

    @Test func eventWithoutMessageOmitsItAndStillDecodes() throws {
        let event = PlayerEvent(
            seq: 1, time: Timestamp(millisecondsSince1970: 0), type: .player,
            reason: .started, message: nil, status: status)
        let data = try JSONEncoder().encode(event)
        let json = try object(data)
        #expect(json["message"] == nil)
        #expect(json["route"] is NSNull)
        #expect(try JSONDecoder().decode(PlayerEvent.self, from: data) == event)
    }
}

/// A small deterministic generator so "random" tests replay identically.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
