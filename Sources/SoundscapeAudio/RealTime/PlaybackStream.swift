import CPipeWire
import CSoundscapeShims
import Glibc

/// One `pw_stream` and its listener. The RT callback gets this object, not the
/// connection, so replacing the stream never changes what a running callback reads.
final class PlaybackStream {
    let stream: OpaquePointer
    let renderer: Renderer
    private unowned let output: PipeWireOutput
    private let hook: UnsafeMutablePointer<spa_hook>

    init(
        core: OpaquePointer, configuration: OutputConfiguration, renderer: Renderer,
        output: PipeWireOutput
    ) throws(StreamConnection.ConnectError) {
        let properties = makeProperties([
            PW_KEY_MEDIA_TYPE: "Audio",
            PW_KEY_MEDIA_CATEGORY: "Playback",
            PW_KEY_MEDIA_ROLE: "Music",
            PW_KEY_MEDIA_NAME: "Soundscape",
            PW_KEY_NODE_NAME: configuration.nodeName,
            PW_KEY_NODE_DESCRIPTION: configuration.nodeDescription,
            PW_KEY_APP_NAME: configuration.applicationName,
            PW_KEY_NODE_LATENCY: "\(configuration.latencyFrames)/\(RenderSettings.sampleRate)",
        ])
        guard let stream = pw_stream_new(core, configuration.nodeName, properties) else {
            throw StreamConnection.ConnectError(description: "cannot create the stream: \(String(cString: strerror(errno)))")
        }
        self.stream = stream
        self.renderer = renderer
        self.output = output
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        pw_stream_add_listener(stream, hook, Self.events, Unmanaged.passUnretained(self).toOpaque())

        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024)
        bytes.initialize(repeating: 0)
        defer { bytes.deallocate() }
        var format: UnsafePointer<spa_pod>?
        do {
            format = try Self.enumFormat(channels: Renderer.channels, into: bytes)
        } catch {
            destroy()
            throw error
        }
        let flags = pw_stream_flags(
            rawValue: PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue
                | PW_STREAM_FLAG_RT_PROCESS.rawValue | PW_STREAM_FLAG_INACTIVE.rawValue)
        let result = pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, SPA_ID_INVALID, flags, &format, 1)
        guard result >= 0 else {
            destroy()
            throw StreamConnection.ConnectError(description: "cannot connect the stream: \(String(cString: strerror(-result)))")
        }
    }

    /// The EnumFormat pod the stream offers, built in `bytes`: planar F32 at the render's
    /// rate, `channels` planes. Only the renderer's two planes (FL, FR) can be carried;
    /// any other count, mono included, is refused here rather than connected wrongly.
    static func enumFormat(
        channels: Int, into bytes: UnsafeMutableBufferPointer<UInt8>
    ) throws(StreamConnection.ConnectError) -> UnsafePointer<spa_pod> {
        guard channels == Renderer.channels else {
            throw StreamConnection.ConnectError(
                description: "the stream carries the renderer's \(Renderer.channels) planes (FL, FR); "
                    + "\(channels) channel\(channels == 1 ? "" : "s") cannot be offered")
        }
        guard
            let format = scs_build_f32p_format(
                bytes.baseAddress, UInt32(bytes.count), UInt32(RenderSettings.sampleRate), UInt32(channels))
        else {
            throw StreamConnection.ConnectError(description: "the stream's format does not fit in \(bytes.count) bytes")
        }
        return format
    }

    /// Disconnects and frees the stream (its listener goes with it).
    func destroy() {
        pw_stream_destroy(stream)
        hook.deinitialize(count: 1)
        hook.deallocate()
    }

    /// Runs on PipeWire's data thread once per graph cycle. The stream carries the
    /// graph's own format, a plane per channel, so PipeWire's converter has nothing
    /// to convert, and the renderer writes the two planes itself.
    private func process() {
        scs_mark_real_time_thread()
        guard let buffer = pw_stream_dequeue_buffer(stream) else { return }
        let spaBuffer = buffer.pointee.buffer.pointee
        if spaBuffer.n_datas >= 2, let datas = spaBuffer.datas,
            let left = datas[0].data?.assumingMemoryBound(to: Float.self),
            let right = datas[1].data?.assumingMemoryBound(to: Float.self)
        {
            let stride = MemoryLayout<Float>.size
            var frames = Int(min(datas[0].maxsize, datas[1].maxsize)) / stride
            let requested = Int(buffer.pointee.requested)
            if requested > 0 { frames = min(frames, requested) }
            renderer.render(into: Renderer.Planes(left: left, right: right), frames: frames)
            for plane in 0..<2 {
                datas[plane].chunk.pointee.offset = 0
                datas[plane].chunk.pointee.stride = Int32(stride)
                datas[plane].chunk.pointee.size = UInt32(frames * stride)
            }
        }
        pw_stream_queue_buffer(stream, buffer)
    }

    // `nonisolated(unsafe)`: written once at first use, read-only afterwards.
    nonisolated(unsafe) private static let events: UnsafeMutablePointer<pw_stream_events> = {
        let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, _, state, error in
            let stream = Unmanaged<PlaybackStream>.fromOpaque(data!).takeUnretainedValue()
            stream.output.streamStateChanged(state, error: error.map { String(cString: $0) })
        }
        events.pointee.process = { data in
            Unmanaged<PlaybackStream>.fromOpaque(data!)._withUnsafeGuaranteedRef { $0.process() }
        }
        return events
    }()
}
