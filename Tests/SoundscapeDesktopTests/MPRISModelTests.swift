import Testing
import SoundscapeCore
@testable import SoundscapeDesktop

@Suite struct MPRISModelTests {
    func status(
        _ state: PlayerState, soundscape: String = "rain", volume: Int = 40, playing: Bool? = nil,
        signer: SignerStatus? = nil
    ) -> PlayerStatus {
        var status = PlayerStatus(
            state: state, isPlaying: playing ?? (state == .playing),
            soundscape: SoundscapeID(soundscape)!, volume: Volume(clamping: volume), route: "speaker",
            wantsPlaying: state != .stopped && state != .paused)
        status.signer = signer
        return status
    }

    @Test func playbackStatusFollowsTheDaemonsState() {
        let cases: [(PlayerState, String)] = [
            (.playing, "Playing"), (.recovering, "Playing"), (.paused, "Paused"), (.interrupted, "Paused"),
            (.stopped, "Stopped"),
        ]
        for (state, expected) in cases {
            #expect(MPRISModel(status: status(state)).playbackStatus == expected, "\(state)")
        }
        #expect(MPRISModel(status: nil).playbackStatus == "Stopped")
    }

    @Test func metadataCarriesTitleTrackIdArtAndTheSignerLine() {
        var signer = SignerStatus(state: .running, pid: 42, restarts: 0, lastExit: nil)
        signer.name = "igloo-signer"
        let model = MPRISModel(
            status: status(.playing, signer: signer), titles: ["rain": "Rain"],
            artURL: "file:///usr/share/icons/hicolor/scalable/apps/soundscaped.svg")
        let metadata = model.metadata
        #expect(metadata["xesam:title"] == .string("Rain"))
        #expect(metadata["mpris:trackid"] == .objectPath("/io/soundscaped/soundscape/rain"))
        #expect(metadata["xesam:artist"] == .strings(["igloo-signer running"]))
        #expect(metadata["mpris:artUrl"] == .string("file:///usr/share/icons/hicolor/scalable/apps/soundscaped.svg"))

        signer.state = .failed
        signer.lastExit = "exited with status 3"
        #expect(
            MPRISModel(status: status(.playing, signer: signer)).signerLine
                == "igloo-signer failed (exited with status 3)")
        #expect(MPRISModel(status: status(.playing)).signerLine == "No signer configured")
        #expect(MPRISModel(status: nil).signerLine == "soundscaped is not running")
        // It runs, but cannot use its configuration: said so, with the daemon's reason, not "not running".
        #expect(
            MPRISModel(status: nil, notConfigured: "--signer-stop-signal: unknown signal 'KILL'").signerLine
                == "soundscaped is not configured: --signer-stop-signal: unknown signal 'KILL'")
    }

    @Test func trackIdsAreValidObjectPathsForAnyId() {
        #expect(MPRISModel.trackID(for: "ocean-waves") == "/io/soundscaped/soundscape/ocean_2Dwaves")
        #expect(MPRISModel.trackID(for: "a.b_c") == "/io/soundscaped/soundscape/a_2Eb_5Fc")
        #expect(MPRISModel.trackID(for: "ocean-waves") != MPRISModel.trackID(for: "ocean_waves"))
    }

    @Test func volumeIsAFraction() {
        #expect(MPRISModel(status: status(.playing, volume: 30)).volume == 0.3)
        #expect(MPRISModel(status: nil).volume == 0)
    }

    @Test func onlyChangedPropertiesAreSignalled() {
        let before = MPRISModel(status: status(.playing), titles: ["rain": "Rain"])
        var after = before
        after.status?.volume = Volume(clamping: 55)
        #expect(after.changedPlayerProperties(since: before) == ["Volume": .double(0.55)])
        after.status?.state = .paused
        #expect(Set(after.changedPlayerProperties(since: before).keys) == ["Volume", "PlaybackStatus"])
        #expect(before.changedPlayerProperties(since: before).isEmpty)
    }

    @Test func theTitleNamesTheSavedMixElseTheLayers() throws {
        let titles = ["rain": "Rain", "ocean-waves": "Ocean waves"]
        var layered = status(.playing)
        layered.layers = [Mix.Layer(SoundscapeID("rain")!), Mix.Layer(SoundscapeID("ocean-waves")!, level: 40)]
        #expect(MPRISModel(status: layered, titles: titles).metadata["xesam:title"] == .string("Rain + Ocean waves"))
        #expect(
            MPRISModel(status: layered, titles: titles).metadata["mpris:trackid"]
                == .objectPath("/io/soundscaped/soundscape/rain"))
        var named = layered
        named.mix = "night rain"
        let metadata = MPRISModel(status: named, titles: titles).metadata
        #expect(metadata["xesam:title"] == .string("night rain"))
        #expect(metadata["mpris:trackid"] == .objectPath("/io/soundscaped/mix/night_20rain"))
        #expect(metadata["xesam:comment"] == nil)
    }

    @Test func theSleepTimerIsTheComment() {
        var sleeping = status(.playing)
        sleeping.sleep = SleepStatus(state: .counting, ends: "2026-11-29T23:00:00Z", remaining: 600)
        #expect(
            MPRISModel(status: sleeping).metadata["xesam:comment"]
                == .strings(["Sleep timer: the sound fades away at 2026-11-29T23:00:00Z"]))
        sleeping.sleep = SleepStatus(state: .asleep)
        #expect(
            MPRISModel(status: sleeping).metadata["xesam:comment"]
                == .strings(["Asleep: silent until Play; the keep-alive goes on"]))
    }

    @Test func nextAndPreviousGoThroughTheSoundscapesThenTheSavedMixes() {
        let order = MPRISModel.tracks(soundscapes: ["forest", "rain"], mixes: ["night"])
        #expect(order == [.soundscape("forest"), .soundscape("rain"), .mix("night")])
        #expect(MPRISModel.neighbour(of: .soundscape("rain"), in: order, step: 1) == .mix("night"))
        #expect(MPRISModel.neighbour(of: .mix("night"), in: order, step: 1) == .soundscape("forest"))
        #expect(MPRISModel.neighbour(of: .soundscape("forest"), in: order, step: -1) == .mix("night"))
        var playing = status(.playing, soundscape: "rain")
        #expect(MPRISModel.track(of: playing) == .soundscape("rain"))
        playing.mix = "night"
        #expect(MPRISModel.track(of: playing) == .mix("night"))
        #expect(MPRISModel.Track.mix("night").playParameters == ["mix": "night"])
        #expect(MPRISModel.Track.soundscape("rain").playParameters == ["soundscape": "rain"])
    }

    @Test func nextAndPreviousCycleInListOrder() {
        let order = ["forest", "ocean-waves", "rain"]
        #expect(MPRISModel.neighbour(of: "rain", in: order, step: 1) == "forest")
        #expect(MPRISModel.neighbour(of: "forest", in: order, step: -1) == "rain")
        #expect(MPRISModel.neighbour(of: "ocean-waves", in: order, step: 1) == "rain")
        #expect(MPRISModel.neighbour(of: "gone", in: order, step: 1) == "forest")
        #expect(MPRISModel.neighbour(of: "rain", in: [], step: 1) == nil)
    }
}
