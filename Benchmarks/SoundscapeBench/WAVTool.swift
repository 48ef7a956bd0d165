import ArgumentParser
import Foundation
import TestSupport

/// `soundscape-bench wav level FILE` and `soundscape-bench wav tone FILE`: TestSupport's
/// audio analysis (AudioAnalysis.swift, WAVFile.swift) for the shell checks
/// (scripts/check-package, scripts/check-package.d/call.sh, scripts/check-upgrade), so
/// that a recording is measured by the same code as in the Swift tests.
///
/// level: the RMS level and the peak of the recording's second half (the first may hold
/// the stream's start), in dBFS with one decimal, as "RMS PEAK" ("-inf" for digital
/// silence); FILE is a WAV as pw-record writes it (a header left unfinished by a recorder
/// that was killed is read to the file's end).
/// tone: writes 30 s of a 300 Hz sine (mono, 48 kHz, 16-bit, peak -11.2 dBFS): a call's
/// stand-in for `pw-play --media-role=Communication`.
struct WAVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wav",
        abstract: "A recording's level and peak, or the call's test tone, by the tests' audio analysis.",
        discussion: """
            level FILE: "RMS PEAK" of the WAV's second half, in dBFS with one decimal ("-inf" for digital silence).
            tone FILE: writes 30 s of a 300 Hz sine (mono, 48 kHz, 16-bit, peak -11.2 dBFS).
            Exits 2 when the file cannot be read or written.
            """,
        helpNames: BenchArguments.helpNames)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case level, tone
    }

    @Argument(help: "level: measure FILE; tone: write the tone to FILE.") var action: Action
    @Argument(help: ArgumentHelp("The WAV file.", valueName: "file"), completion: .file()) var file: String

    func run() throws {
        throw ExitCode(WAVTool.main(action, URL(fileURLWithPath: file)))
    }
}

enum WAVTool {
    static func main(_ action: WAVCommand.Action, _ url: URL) -> Int32 {
        do {
            switch action {
            case .level:
                let clip = try WAVFile.read(url)
                let tail = clip.slice(from: clip.duration / 2)
                guard tail.frameCount > 0 else { return fail("\(url.path): an empty recording") }
                print("\(decibels(tail.rmsDB())) \(decibels(tail.peakDB))")
            case .tone:
                let clip = AudioClip.sine(frequency: 300, amplitude: 9000 / 32768, seconds: 30, channels: 1)
                try WAVFile.write(clip, to: url, format: .int16)
            }
        } catch {
            return fail("\(error)")
        }
        return 0
    }

    static func decibels(_ value: Float) -> String {
        value.isFinite ? String(format: "%.1f", value) : "-inf"
    }

    static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("soundscape-bench wav: \(message)\n".utf8))
        return 2
    }
}
