import ArgumentParser
import Foundation
import SoundscapeSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `soundscape-bench import`: how long `soundscapectl import` takes per format, beside
/// ffmpeg's plain decode and Opus encode of the same file (the peer, in the same run,
/// alternating round by round), and the peak RSS of an hour-long import. Needs no graph.
///
/// The material is made here with sox (a pink-noise bed whose level drifts, a silent head,
/// a faded tail: what `import` trims and loops), 44.1 kHz stereo, then encoded with sox
/// (FLAC, Ogg Vorbis), opusenc and lame (192 kbit/s). The budget (issue 38): a 4-minute
/// 44.1 kHz MP3 in at most 5 s on a 2-core machine; an hour with a peak RSS under 64 MiB.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "`soundscapectl import` per format beside ffmpeg's decode and Opus encode, and an hour's peak RSS.",
        discussion: """
            Times `soundscapectl import` of one recording in each format against ffmpeg's plain \
            decode and Opus encode of the same file (96 kbit/s, as import writes), alternating, \
            and measures the peak RSS of importing an hour. Build both in release first:
              swift build -c release --product soundscapectl && swift build -c release --product soundscape-bench
            """,
        helpNames: BenchArguments.helpNames)

    static let defaults = ImportBench.Arguments()

    @Option(help: "The recording's length, min (at least 0.1).") var minutes = ImportCommand.defaults.minutes
    @Option(help: "The long recording (MP3) for the memory figure, min (0 skips).") var hourMinutes = ImportCommand.defaults.hourMinutes
    @Option(help: "Imports and ffmpeg runs per format, alternating (at least 1).") var rounds = ImportCommand.defaults.rounds
    @Option(help: ArgumentHelp("Comma-separated subset of wav,flac,ogg,opus,mp3.", valueName: "list"))
    var formats = ImportCommand.defaults.formats.joined(separator: ",")
    @Option(help: ArgumentHelp("The soundscapectl to measure (default: the one beside this executable).", valueName: "path"), completion: .file())
    var soundscapectl: String?
    @Option(
        help: ArgumentHelp("Keep the material there and reuse it on the next run (default: a temporary folder).", valueName: "dir"),
        completion: .directory)
    var work: String?
    @Option(help: ArgumentHelp("Also write the raw numbers as JSON.", valueName: "file")) var json: String?

    func validate() throws {
        try BenchArguments.requireFigure(minutes, "--minutes")
        try BenchArguments.requireFigure(hourMinutes, "--hour-minutes")
        try BenchArguments.requireCount(rounds, "--rounds")
        _ = try arguments()
    }

    func arguments() throws -> ImportBench.Arguments {
        var o = ImportBench.Arguments()
        o.minutes = max(0.1, minutes)
        o.hourMinutes = hourMinutes
        o.rounds = max(1, rounds)
        o.formats = try BenchArguments.list(formats, of: ImportBench.Format.allCases.map(\.rawValue), "--formats")
        o.soundscapectl = soundscapectl.map(BenchArguments.path)
        o.work = work.map(BenchArguments.path)
        o.json = json
        return o
    }

    func run() throws {
        let status: Int32
        do {
            status = try ImportBench.run(try arguments())
        } catch {
            FileHandle.standardError.write(Data("soundscape-bench import: \(error)\n".utf8))
            status = 1
        }
        throw ExitCode(status)
    }
}

enum ImportBench {
    struct Arguments: Codable {
        var minutes: Double = 4
        var hourMinutes: Double = 60
        var rounds = 3
        var formats = Format.allCases.map(\.rawValue)
        var soundscapectl: String?
        var work: String?
        var json: String?
    }

    enum Format: String, CaseIterable, Codable {
        case wav, flac, ogg, opus, mp3

        var title: String {
            switch self {
            case .wav: "WAV"
            case .flac: "FLAC"
            case .ogg: "Ogg Vorbis"
            case .opus: "Ogg Opus"
            case .mp3: "MP3"
            }
        }
    }

    /// One run of a program: wall time from spawn to exit, and its peak RSS (`wait4`: the
    /// largest of the process and the children it waited for, so `import`'s worker counts).
    struct Run: Codable {
        var seconds: Double
        var peakRSSMiB: Double
    }

    struct Row: Codable {
        var format: String
        var fileMiB: Double
        var imports: [Run]
        var ffmpeg: [Run]
    }

    struct Report: Codable {
        var commandLine: [String]
        var date: String
        var cpuModel: String
        var cpus: Int
        var loadAverageAtStart: String
        var recordingSeconds: Double
        var rows: [Row]
        var hour: Row?
    }

    static func run(_ options: Arguments) throws -> Int32 {
        let ctl = options.soundscapectl ?? besideThisExecutable("soundscapectl")
        guard FileManager.default.isExecutableFile(atPath: ctl) else {
            throw HarnessError("no soundscapectl at \(ctl): build it (`swift build -c release --product soundscapectl`) or pass --soundscapectl")
        }
        try ExternalTools.require(["sox", "opusenc", "lame", "ffmpeg"])
        let keep = options.work != nil
        let work = options.work ?? NSTemporaryDirectory() + "soundscape-bench-import-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(atPath: work) } }
        let data = work + "/data"
        try? FileManager.default.removeItem(atPath: data)

        var report = Report(
            commandLine: CommandLine.arguments, date: ISO8601DateFormatter().string(from: Date()), cpuModel: EnvironmentSummary.cpuModel(),
            cpus: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            loadAverageAtStart: (ProcFS.read("/proc/loadavg") ?? "?").split(separator: " ").prefix(3).joined(separator: " "),
            recordingSeconds: options.minutes * 60, rows: [])
        log("soundscapectl: \(ctl); work folder: \(work); load average \(report.loadAverageAtStart)")

        let seconds = options.minutes * 60
        let wav = try material(seconds: seconds, in: work)
        for name in options.formats {
            guard let format = Format(rawValue: name) else { continue }
            let file = try encode(wav, as: format, in: work)
            var row = Row(format: format.title, fileMiB: mebibytes(file), imports: [], ffmpeg: [])
            for round in 1...options.rounds {
                row.imports.append(try importRun(file, id: "bench-\(name)", ctl: ctl, data: data))
                row.ffmpeg.append(try ffmpegRun(file, work: work))
                log(
                    "\(format.title) round \(round): import \(fixed(row.imports.last!.seconds)) s, "
                        + "ffmpeg \(fixed(row.ffmpeg.last!.seconds)) s")
            }
            report.rows.append(row)
        }
        if options.hourMinutes > 0 {
            let hour = try longMP3(seconds: options.hourMinutes * 60, in: work)
            var row = Row(format: "MP3, \(minutes(options.hourMinutes)) min", fileMiB: mebibytes(hour), imports: [], ffmpeg: [])
            row.imports.append(try importRun(hour, id: "bench-hour", ctl: ctl, data: data))
            row.ffmpeg.append(try ffmpegRun(hour, work: work))
            log("the hour: import \(fixed(row.imports[0].seconds)) s, \(fixed(row.imports[0].peakRSSMiB)) MiB")
            report.hour = row
        }
        print(render(report, options: options))
        if let json = options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
        return 0
    }

    // MARK: Material

    /// The recording, 44.1 kHz stereo 16-bit WAV: 1.2 s of silence, a pink-noise bed whose
    /// level drifts (tremolo at 0.13 Hz, 40 %), the last 3 s faded out.
    static func material(seconds: Double, in work: String) throws -> String {
        let path = work + "/recording-\(fixed(seconds, digits: 0))s.wav"
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        log("making \(fixed(seconds / 60, digits: 1)) minutes of material")
        try shell(
            "sox -R -n -r 44100 -c 2 -b 16 -t wav \"$1\" synth \"$2\" pinknoise vol 0.12 tremolo 0.13 40 pad 1.2 0 fade t 0 0 3",
            path + ".part", fixed(seconds - 1.2, digits: 1))
        try FileManager.default.moveItem(atPath: path + ".part", toPath: path)
        return path
    }

    static func encode(_ wav: String, as format: Format, in work: String) throws -> String {
        let path = (wav as NSString).deletingPathExtension + "." + format.rawValue
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let part = path + ".part"
        switch format {
        case .wav: try shell("cp \"$1\" \"$2\"", wav, part)
        case .flac: try shell("sox \"$1\" -t flac \"$2\"", wav, part)
        case .ogg: try shell("sox \"$1\" -t vorbis \"$2\"", wav, part)
        case .opus: try shell("opusenc --quiet \"$1\" \"$2\"", wav, part)
        case .mp3: try shell("lame --quiet -b 192 \"$1\" \"$2\"", wav, part)
        }
        try FileManager.default.moveItem(atPath: part, toPath: path)
        return path
    }

    /// The long recording, made as it is encoded (an hour of WAV is 600 MiB).
    static func longMP3(seconds: Double, in work: String) throws -> String {
        let path = work + "/recording-\(fixed(seconds, digits: 0))s.mp3"
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        log("making \(fixed(seconds / 60, digits: 0)) minutes of MP3 (a minute or two)")
        try shell(
            "sox -R -n -r 44100 -c 2 -b 16 -t wav - synth \"$2\" pinknoise vol 0.12 tremolo 0.13 40 pad 1.2 0 fade t 0 0 3 "
                + "| lame --quiet -b 192 - \"$1\"",
            path + ".part", fixed(seconds - 1.2, digits: 1))
        try FileManager.default.moveItem(atPath: path + ".part", toPath: path)
        return path
    }

    // MARK: Runs

    static func importRun(_ file: String, id: String, ctl: String, data: String) throws -> Run {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data
        return try measure([ctl, "import", file, "--id", id, "--replace"], environment: environment)
    }

    /// The peer: ffmpeg decodes the file and encodes it with libopus, 48 kHz stereo at 96
    /// kbit/s as import writes, and nothing more (no loop search, no loudness, no limiter).
    static func ffmpegRun(_ file: String, work: String) throws -> Run {
        try measure(
            [
                "ffmpeg", "-nostdin", "-hide_banner", "-v", "error", "-y", "-i", file, "-c:a", "libopus", "-b:a", "96k",
                "-ar", "48000", "-ac", "2", work + "/ffmpeg-out.opus",
            ], environment: ProcessInfo.processInfo.environment)
    }

    static func measure(_ command: [String], environment: [String: String]) throws -> Run {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("soundscape-bench-import-\(getpid()).log").path
        let output = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer {
            close(output)
            close(input)
            unlink(log)
        }
        let start = ContinuousClock.now
        let pid = try Spawn.run(
            program: command[0], arguments: command, environment: environment, searchPath: !command[0].hasPrefix("/"),
            stdio: [input, output, output])
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let elapsed = ContinuousClock.now - start
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw HarnessError("`\(command.joined(separator: " "))` failed (wait status \(status)): \(ProcFS.read(log) ?? "")")
        }
        let components = elapsed.components
        return Run(
            seconds: Double(components.seconds) + Double(components.attoseconds) / 1e18,
            peakRSSMiB: Double(usage.ru_maxrss) / 1024)
    }

    // MARK: The report

    static func render(_ report: Report, options: Arguments) -> String {
        func median(_ values: [Double]) -> Double { Summary(values).p50 }
        var lines = [
            "Import of a \(minutes(options.minutes))-minute 44.1 kHz stereo recording; \(report.cpus) CPUs (\(report.cpuModel)); "
                + "load average at the start \(report.loadAverageAtStart)",
            "median of \(options.rounds) rounds, each an import and an ffmpeg run; times are wall clock, RSS the peak (import: its worker included)",
            "",
            "format        file MiB   import s   × real time   ffmpeg s   import ÷ ffmpeg   import RSS MiB   ffmpeg RSS MiB",
        ]
        func row(_ row: Row, seconds: Double) -> String {
            let imported = median(row.imports.map(\.seconds))
            let peer = median(row.ffmpeg.map(\.seconds))
            return row.format.padding(toLength: 14, withPad: " ", startingAt: 0)
                + [
                    fixed(row.fileMiB), fixed(imported, digits: 2), fixed(seconds / imported, digits: 0), fixed(peer, digits: 2),
                    fixed(imported / peer, digits: 2), fixed(median(row.imports.map(\.peakRSSMiB))),
                    fixed(median(row.ffmpeg.map(\.peakRSSMiB))),
                ].enumerated().map { index, text in
                    let widths = [8, 11, 14, 11, 18, 17, 17]
                    return String(repeating: " ", count: max(1, widths[index] - text.count)) + text
                }.joined()
        }
        for item in report.rows { lines.append(row(item, seconds: report.recordingSeconds)) }
        if let hour = report.hour {
            lines.append(row(hour, seconds: options.hourMinutes * 60))
        }
        lines.append("")
        if let mp3 = report.rows.first(where: { $0.format == Format.mp3.title }) {
            let seconds = median(mp3.imports.map(\.seconds))
            let budget = 5 * options.minutes / 4
            lines.append(
                "budget: the \(minutes(options.minutes))-minute MP3 in at most \(fixed(budget)) s: \(fixed(seconds, digits: 2)) s, "
                    + (seconds <= budget ? "within" : "OVER"))
        }
        if let hour = report.hour {
            let rss = hour.imports[0].peakRSSMiB
            lines.append("budget: the long recording under 64 MiB peak RSS: \(fixed(rss)) MiB, " + (rss < 64 ? "within" : "OVER"))
        }
        return lines.joined(separator: "\n")
    }

    static func fixed(_ value: Double, digits: Int = 1) -> String {
        guard value.isFinite else { return "?" }
        return String(format: "%.\(digits)f", value)
    }

    static func minutes(_ value: Double) -> String {
        fixed(value, digits: value == value.rounded() ? 0 : 1)
    }

    static func mebibytes(_ path: String) -> Double {
        Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
    }

    static func shell(_ script: String, _ arguments: String...) throws {
        _ = try ChildProcess.run(["sh", "-c", script, "sh"] + arguments, timeout: .seconds(900)).requireSuccess()
    }

    static func besideThisExecutable(_ name: String) -> String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path
    }
}
