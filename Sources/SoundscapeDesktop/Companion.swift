import FoundationEssentials
import Glibc
import Logging
import SoundscapeCore

/// soundscaped-desktop: the daemon's face on the desktop. A varlink client of
/// the daemon (its events and its calls) and, on the session bus, an MPRIS
/// player and a notification source. The daemon itself stays D-Bus-free.
///
/// One thread, one `poll`: the bus's descriptor, the two daemon connections
/// (events; calls) and at most two deadlines (reconnect, the alarm's next
/// look). While nothing changes nothing is due, and the process sleeps in
/// `poll` without a timeout: zero wake-ups a second.
///
/// Connecting to the control socket may start the daemon (socket activation),
/// and that is wanted: the companion starts with the graphical session, and a
/// daemon started then restores the user's keep-alive session, which is what
/// the phone app does when it is opened. A user who stops the daemon for good
/// stops its socket too (`systemctl --user stop soundscaped.socket`); the
/// companion then shows Stopped and tries again with backoff up to 30 s.
public final class Companion {
    public struct Options: Sendable {
        public var socketPath: String
        public var artURL: String?
        public var alarm = KeepAliveAlarm.Configuration()

        public init(socketPath: String, artURL: String?) {
            self.socketPath = socketPath
            self.artURL = artURL
        }
    }

    private let options: Options
    private let logger: Logger
    private let bus: BusConnection
    private var model: MPRISModel
    /// The playable soundscapes' ids in list order, then the saved mixes' names, for Next and Previous.
    private var soundscapeOrder: [String] = []
    private var mixOrder: [String] = []
    private var events: VarlinkConnection?
    private var calls: VarlinkConnection?
    private var connected = false
    private var reconnectAt: ContinuousClock.Instant?
    private var backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(30))
    private var alarm: KeepAliveAlarm
    private var alarmTickAt: ContinuousClock.Instant?
    /// The notification server's id of each incident's notification (replaces_id).
    private var notificationIDs: [Int: UInt32] = [:]
    private var noNotificationServerLogged = false

    public init(options: Options, logger: Logger) throws(BusError) {
        self.options = options
        self.logger = logger
        bus = try BusConnection()
        model = MPRISModel(artURL: options.artURL)
        alarm = KeepAliveAlarm(configuration: options.alarm)
    }

    /// Serves until the session bus goes away (then throws).
    public func run() throws(BusError) {
        let object = MPRISObject(model: { [unowned self] in model }, command: { [unowned self] in perform($0) })
        try bus.addObject(path: MPRISModel.objectPath, handler: object.handle)
        try bus.requestName(MPRISModel.busName)
        logger.info("serving \(MPRISModel.busName) for \(options.socketPath)")
        connect()
        while true {
            try bus.processAll()
            fireDeadlines()
            var descriptors = [pollfd(fd: bus.fileDescriptor, events: bus.pollEvents, revents: 0)]
            let links = [events, calls].compactMap { $0 }
            for link in links {
                descriptors.append(
                    pollfd(
                        fd: link.fd, events: Int16(POLLIN) | (link.wantsWrite ? Int16(POLLOUT) : 0),
                        revents: 0))
            }
            let timeout =
                [bus.timeoutMilliseconds, milliseconds(until: reconnectAt), milliseconds(until: alarmTickAt)]
                .compactMap { $0 }.min() ?? -1
            if poll(&descriptors, nfds_t(descriptors.count), timeout) < 0, errno != EINTR {
                throw BusError("poll: \(String(cString: strerror(errno)))")
            }
            for (index, link) in links.enumerated() where descriptors[index + 1].revents != 0 {
                link.flush()
                if !link.readAvailable() {
                    // A failed call may have reported it already (then both links are gone).
                    if events != nil { disconnected(because: "the daemon closed the connection") }
                    break
                }
            }
        }
    }

    // MARK: The daemon

    private func connect() {
        reconnectAt = nil
        do {
            let events = try VarlinkConnection(path: options.socketPath)
            let calls = try VarlinkConnection(path: options.socketPath)
            self.events = events
            self.calls = calls
        } catch {
            disconnected(because: error.description)
            return
        }
        events?.call("Subscribe", more: true) { [unowned self] result in
            switch result {
            case .success(let bytes):
                guard let event = try? JSONDecoder().decode(Reply<EventParameters>.self, from: Data(bytes)).parameters.event
                else {
                    logger.warning("an event from the daemon did not decode; ignored")
                    return
                }
                received(event)
            case .failure(let failure):
                if failure.description == "io.soundscaped.Player.NotConfigured", let reason = failure.reason {
                    notConfigured(reason)
                    disconnected(because: failure.description, notConfigured: reason)
                } else {
                    disconnected(because: failure.description)
                }
            }
        }
        refreshSoundscapes()
        refreshPreferences()
    }

    private func received(_ event: PlayerEvent) {
        if !connected {
            connected = true
            backoff.reset()
            logger.info("connected to the daemon (\(event.status.state.rawValue))")
        }
        // A soundscape the list does not know was added since it was read. (An empty list is
        // still on its way: connect asked for it beside the subscription.)
        if !model.titles.isEmpty, model.titles[event.status.soundscape.rawValue] == nil {
            refreshSoundscapes()
        }
        if event.reason == .preferencesChanged { refreshPreferences() }
        if event.reason == .mixesChanged { refreshMixes() }
        var next = model
        next.status = event.status
        next.notConfigured = nil
        publish(next)
        perform(alarm.update(event.status, now: .now))
    }

    /// The daemon answers, but cannot use its configuration: say so once (the alarm decides).
    private func notConfigured(_ reason: String) {
        logger.warning("the daemon is not configured: \(reason)")
        perform(alarm.notConfigured(reason, now: .now))
    }

    /// `notConfigured`: the daemon runs and said why it cannot play, which the media
    /// controls show until it answers with a status or is gone.
    private func disconnected(because reason: String, notConfigured: String? = nil) {
        let wasConnected = connected
        connected = false
        events = nil
        calls = nil
        if wasConnected { logger.warning("lost the daemon: \(reason)") }
        var next = model
        next.status = nil
        next.notConfigured = notConfigured
        publish(next)
        perform(alarm.update(nil, now: .now))
        let delay = backoff.next()
        reconnectAt = .now + delay
        if !wasConnected { logger.debug("cannot reach the daemon (\(reason)); trying again in \(delay)") }
    }

    private func refreshSoundscapes(then: (() -> Void)? = nil) {
        calls?.call("ListSoundscapes") { [unowned self] result in
            if case .success(let bytes) = result,
                let list = try? JSONDecoder().decode(Reply<SoundscapeList>.self, from: Data(bytes)).parameters
            {
                soundscapeOrder = list.soundscapes.filter { $0.unplayable == nil }.map(\.id)
                var next = model
                next.titles = Dictionary(list.soundscapes.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first })
                publish(next)
            }
            then?()
        }
    }

    /// The saved mixes' names, after the soundscapes for Next and Previous (none from an older daemon).
    private func refreshMixes(then: (() -> Void)? = nil) {
        calls?.call("ListMixes") { [unowned self] result in
            if case .success(let bytes) = result,
                let list = try? JSONDecoder().decode(Reply<MixList>.self, from: Data(bytes)).parameters
            {
                mixOrder = list.mixes.map(\.name)
            }
            then?()
        }
    }

    /// The `notifications` preference, at connect and after each preferencesChanged event.
    private func refreshPreferences() {
        calls?.call("GetPreferences") { [unowned self] result in
            guard case .success(let bytes) = result,
                let reply = try? JSONDecoder().decode(Reply<PreferencesParameters>.self, from: Data(bytes))
            else { return }
            alarm.setEnabled(reply.parameters.preferences.notifications)
        }
    }

    // MARK: Media controls

    private func perform(_ command: MPRISCommand) {
        guard let calls, connected else {
            logger.notice("media control \(command) ignored: the daemon is not connected")
            return
        }
        let done: VarlinkConnection.Completion = { [unowned self] result in
            if case .failure(let failure) = result { logger.warning("media control \(command) failed: \(failure)") }
        }
        switch command {
        case .play: calls.call("Play", completion: done)
        case .pause: calls.call("Pause", completion: done)
        case .playPause: calls.call(model.playbackStatus == "Playing" ? "Pause" : "Play", completion: done)
        case .stop: calls.call("Stop", completion: done)
        case .setVolume(let volume):
            calls.call("SetVolume", parameters: "{\"volume\":\(Int((volume * 100).rounded()))}", completion: done)
        case .next, .previous:
            // The lists may have changed since they were last read (a file added, a mix saved): read them again first.
            refreshSoundscapes { [unowned self] in
                refreshMixes { [unowned self] in
                    let order = MPRISModel.tracks(soundscapes: soundscapeOrder, mixes: mixOrder)
                    guard let status = model.status,
                        let target = MPRISModel.neighbour(
                            of: MPRISModel.track(of: status), in: order, step: command == .next ? 1 : -1),
                        let parameters = try? JSONEncoder().encode(target.playParameters)
                    else { return }
                    self.calls?.call("Play", parameters: String(decoding: parameters, as: UTF8.self), completion: done)
                }
            }
        }
    }

    private func publish(_ next: MPRISModel) {
        let changed = next.changedPlayerProperties(since: model)
        model = next
        bus.emitPropertiesChanged(path: MPRISModel.objectPath, interface: MPRISModel.playerInterface, changed: changed)
    }

    // MARK: Notifications

    private func perform(_ actions: [KeepAliveAlarm.Action]) {
        for action in actions {
            switch action {
            case .scheduleTick(let deadline):
                alarmTickAt = min(alarmTickAt ?? deadline, deadline)
            case .show(let message):
                notify(message)
            }
        }
    }

    private func notify(_ message: KeepAliveAlarm.Message) {
        let replaces = notificationIDs[message.incident] ?? 0
        bus.callAsync(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "Notify",
            arguments: { call in
                call.append(string: "Soundscape")
                call.append(uint32: replaces)
                call.append(string: "soundscaped")
                call.append(string: message.summary)
                call.append(string: message.body)
                call.append(strings: [])
                call.append(dictionary: ["urgency": .byte(message.critical ? 2 : 1), "desktop-entry": .string("soundscaped")])
                call.append(int32: -1)
            },
            reply: { [unowned self] result in
                switch result {
                case .success(let reply):
                    if let id = reply.readUInt32() { notificationIDs = [message.incident: id] }
                    logger.info("notified: \(message.summary): \(message.body)")
                case .failure(let error):
                    if !noNotificationServerLogged {
                        noNotificationServerLogged = true
                        logger.warning("cannot show notifications (\(error)); going on without them")
                    }
                }
            })
    }

    // MARK: Deadlines

    private func fireDeadlines() {
        let now = ContinuousClock.now
        if let reconnectAt, reconnectAt <= now { connect() }
        if let tick = alarmTickAt, tick <= now {
            alarmTickAt = nil
            perform(alarm.tick(now: now))
        }
    }

    private func milliseconds(until deadline: ContinuousClock.Instant?) -> Int32? {
        guard let deadline else { return nil }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        return Int32(clamping: remaining.inMilliseconds(rounded: .up))
    }
}

// MARK: Replies

private struct Reply<Parameters: Decodable>: Decodable {
    var parameters: Parameters
}

private struct EventParameters: Decodable {
    var event: PlayerEvent
}

private struct SoundscapeList: Decodable {
    struct Item: Decodable {
        var id: String
        var title: String
        /// Why the file cannot play (nil: it can); Next and Previous pass it by.
        var unplayable: String?
    }

    var soundscapes: [Item]
}

private struct MixList: Decodable {
    struct Item: Decodable {
        var name: String
    }

    var mixes: [Item]
}

private struct PreferencesParameters: Decodable {
    var preferences: Preferences
}
