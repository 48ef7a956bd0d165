import CPipeWire
import CSoundscapeShims
import Testing
@testable import SoundscapeAudio

/// The stream offers planar F32 in the renderer's two planes, and nothing else: a
/// mono (or any other) layout is refused where the format is built, not connected wrongly.
@Suite struct StreamFormatTests {
    @Test func theStreamOffersTwoPlanesOfF32AtTheRenderRate() throws {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024)
        defer { bytes.deallocate() }
        let format = try PlaybackStream.enumFormat(channels: 2, into: bytes)
        var info = spa_audio_info_raw()
        #expect(spa_format_audio_raw_parse(format, &info) >= 0)
        #expect(info.format == SPA_AUDIO_FORMAT_F32P)
        #expect(info.channels == 2)
        #expect(info.rate == UInt32(RenderSettings.sampleRate))
        #expect(info.position.0 == SPA_AUDIO_CHANNEL_FL.rawValue)
        #expect(info.position.1 == SPA_AUDIO_CHANNEL_FR.rawValue)
    }

    @Test(arguments: [0, 1, 3, 6])
    func anyOtherChannelCountIsRefusedWithAClearError(channels: Int) {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024)
        defer { bytes.deallocate() }
        let error = #expect(throws: StreamConnection.ConnectError.self) {
            try PlaybackStream.enumFormat(channels: channels, into: bytes)
        }
        #expect(error?.description.contains("\(channels) channel") == true, "\(String(describing: error))")
        #expect(error?.description.contains("2 planes (FL, FR)") == true)
    }

    /// The shim itself refuses mono, so no caller can build a one-plane format by mistake.
    @Test func theShimRefusesMonoAndAnyCountButTwo() {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024)
        defer { bytes.deallocate() }
        for channels: UInt32 in [0, 1, 3] {
            #expect(scs_build_f32p_format(bytes.baseAddress, UInt32(bytes.count), 48_000, channels) == nil)
        }
        #expect(scs_build_f32p_format(bytes.baseAddress, UInt32(bytes.count), 48_000, 2) != nil)
    }

    @Test func aBufferTooSmallIsAnErrorToo() {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 16)
        defer { bytes.deallocate() }
        let error = #expect(throws: StreamConnection.ConnectError.self) {
            try PlaybackStream.enumFormat(channels: 2, into: bytes)
        }
        #expect(error?.description.contains("does not fit") == true)
    }
}
