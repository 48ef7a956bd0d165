import ArgumentParser
import Glibc
import SoundscapeCore
import SoundscapeImport
import SoundscapeLibrary
import SoundscapeSystem
import Varlink

/// Where imports go and what they must not override, as the daemon finds them
/// (`SoundscapeCatalog.Locations.standard`, from the same environment).
enum ImportLocations {
    static var standard: SoundscapeCatalog.Locations {
        SoundscapeCatalog.Locations.standard(
            extra: [], environment: FileSystem.environment(), executablePath: FileSystem.linkTarget("/proc/self/exe") ?? CommandLine.arguments[0])
    }

    static func folder() throws -> String {
        guard let folder = standard.user else {
            Control.fail("no soundscape folder: neither $XDG_DATA_HOME nor $HOME is an absolute path", status: 1)
        }
        return folder
    }

    static var builtinIDs: Set<String> {
        guard let builtin = standard.builtin else { return [] }
        return Set(SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: nil)).entries.map(\.id.rawValue))
    }

    /// A refusal: 64 when the command line is at fault, else 1.
    static func fail(_ refusal: ImportRefusal, command: any ParsableCommand.Type) -> Never {
        if refusal.usage { Control.usageError(refusal.message, command: command) }
        Control.fail(refusal.message, status: 1)
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make a recording a soundscape: a seamless loop at the built-ins' loudness.",
        discussion: """
            Reads WAV, FLAC, Ogg Vorbis, Ogg Opus or MP3 (8 to 192 kHz, any number of channels, up to \
            \(Int(LoopPlanner.maximumSeconds / 60)) minutes), trims silence and fades at both ends, chooses \
            the loop's end where the crossfade is least audible and crossfades the end onto the start \
            (equal power, up to \(Int(LoopPlanner.crossfadeSeconds)) s), brings it to \
            \(SoundscapeLoudness.target) LUFS (ITU-R BS.1770, as the built-ins) with a true peak at most \
            \(Int(SoundscapeLoudness.truePeakCeiling)) dBTP (a limiter holds the peaks of a raised recording), \
            and writes ID.opus (Ogg Opus, 48 kHz, stereo) and its manifest entry into \
            $XDG_DATA_HOME/soundscaped/soundscapes. The running daemon lists and plays it at once. \
            The recording is decoded in a child process that can do nothing else (seccomp: no files opened, \
            no network, no programs; bounded memory). A recording under \(Int(LoopPlanner.minimumSeconds)) s \
            after trimming is refused. Prints the id, the loop's length and the loudness change; progress \
            only on a terminal. The file is written under a hidden temporary name and renamed into place: \
            a full disk leaves nothing, a killed import only that temporary file, which the next import or \
            the daemon's start removes. Exit status: 0 imported; 1 refused (the file and the reason are named; \
            nothing in the folder changed); 64 the command line is wrong (an id that is not a plain name).
            """)

    @Argument(help: "The recording.", completion: .file())
    var path: String
    @Option(help: ArgumentHelp("The soundscape's id (default: the file's name, lowercased, spaces as hyphens).", valueName: "id"))
    var id: String?
    @Option(help: ArgumentHelp("The title `list` shows (default: the id).", valueName: "title"))
    var title: String?
    @Option(help: ArgumentHelp("Who made the recording and its licence, shown by `list`.", valueName: "text"))
    var credit: String?
    @Flag(help: "Replace an imported soundscape with the same id (never a built-in one).")
    var replace = false

    func validate() throws {
        if case .failure(let refusal) = Importer.checkID(id ?? Importer.defaultID(for: path)) {
            throw ValidationError(id == nil ? "\(refusal.message) (the file's name; choose one with --id)" : refusal.message)
        }
        if let title, title.unicodeScalars.contains(where: { $0.value < 0x20 }) { throw ValidationError("the title has a control character") }
    }

    func run() throws {
        let checked = Importer.checkID(id ?? Importer.defaultID(for: path))
        guard case .success(let soundscape) = checked else { return }
        let request = Importer.Request(
            path: path, id: soundscape, title: title ?? soundscape.rawValue, credit: credit, replace: replace,
            folder: try ImportLocations.folder(), builtinIDs: ImportLocations.builtinIDs,
            worker: [FileSystem.linkTarget("/proc/self/exe") ?? CommandLine.arguments[0], "import-worker"])
        let terminal = isatty(STDERR_FILENO) == 1
        let result: Importer.Result
        do {
            result = try Importer.run(request) { fraction in
                guard terminal else { return }
                writeStderr("\rImporting \(path): \(Int(fraction * 100))%")
            }
        } catch {
            if terminal { writeStderr("\r\u{1B}[K") }
            ImportLocations.fail(error, command: Self.self)
        }
        if terminal { writeStderr("\r\u{1B}[K") }
        print(ImportReport.describe(result))
    }
}

enum ImportReport {
    static func describe(_ result: Importer.Result) -> String {
        let change = result.gain >= 0 ? "+\(fixed(result.gain)) dB" : "\(fixed(result.gain)) dB"
        var lines = [
            "\(result.replaced ? "Replaced" : "Imported") \(result.id) (\(result.path))",
            "  loop      \(time(result.loopSeconds)) from \(time(result.trimmedHeadSeconds))–\(time(result.trimmedHeadSeconds + result.usedSeconds)) of \(time(result.sourceSeconds)) (\(result.sourceRate) Hz, \(result.sourceChannels) ch)",
            "  loudness  \(fixed(result.sourceLoudness)) → \(fixed(result.loudness)) LUFS (\(change)), "
                + (result.truePeak.isFinite ? "true peak \(fixed(result.truePeak)) dBTP" : "peak \(fixed(result.samplePeak)) dBFS"),
        ]
        if result.limiter < -0.05 { lines.append("  limiter   up to \(fixed(-result.limiter)) dB on the loudest peaks") }
        lines.append("Play it with: soundscapectl play \(result.id)")
        return lines.joined(separator: "\n")
    }

    static func fixed(_ value: Double) -> String {
        guard value.isFinite else { return "?" }
        let tenths = Int((abs(value) * 10).rounded())
        return "\(value < 0 && tenths > 0 ? "-" : "")\(tenths / 10).\(tenths % 10)"
    }

    static func time(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let tenths = Int((seconds * 10).rounded())
        let minutes = tenths / 600
        let rest = tenths % 600
        return "\(minutes):\(rest / 100)\(rest / 10 % 10).\(rest % 10)"
    }
}

/// The import's untrusted half, run by `import` in a child process (not for people: hidden).
struct ImportWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import-worker", shouldDisplay: false)
    @Option var title: String?
    @Option var serial: Int32 = 0

    func run() throws {
        let status = ImportWorker.run(title: title, serial: serial)
        throw ExitCode(status)
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove an imported soundscape (never a built-in one).",
        discussion: """
            Deletes ID.opus and its manifest entry from $XDG_DATA_HOME/soundscaped/soundscapes. If the daemon \
            plays it, it switches to the default soundscape first. Exit status: 0 removed; 1 refused (a built-in \
            or unknown id); 64 the command line is wrong.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: "The imported soundscape's id.",
        completion: .custom { words, _, _ in await Completion.importedIDs(completing: words) })
    var name: String

    func run() async throws {
        let id: SoundscapeID
        switch Importer.checkID(name) {
        case .success(let checked): id = checked
        case .failure(let refusal): ImportLocations.fail(refusal, command: Self.self)
        }
        let folder = try ImportLocations.folder()
        let builtin = ImportLocations.builtinIDs
        if builtin.contains(name) && !FileSystem.exists(FilePaths.join(folder, "\(name).opus")) {
            Control.fail("'\(name)' is a built-in soundscape: only imported ones can be removed", status: 1)
        }
        // A daemon that plays it switches away first; no daemon, nothing to switch.
        var switched: String?
        if let path = DaemonPaths.socket(explicit: connection.socket, environment: FileSystem.environment()),
            let client = try? await VarlinkClient.connect(unixPath: path, timeout: Control.Bound.connect)
        {
            let control = Control(client: client)
            do {
                let status = try await control.status()
                if status.soundscape == id, status.state == .playing {
                    let list = try await control.soundscapes()
                    let fallback = list.default != name ? list.default : list.soundscapes.first { $0.id != name }?.id
                    if let fallback {
                        _ = try await control.play(fallback)
                        switched = fallback
                    }
                }
                await client.close()
            } catch {
                await client.close()
                Control.fail("cannot switch away from \(name) before removing it: \(error)", status: 1)
            }
        }
        do {
            try Importer.remove(id, folder: folder, builtinIDs: builtin)
        } catch {
            ImportLocations.fail(error, command: Self.self)
        }
        print("Removed \(name)" + (switched.map { " (now playing \($0))" } ?? ""))
    }
}
