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
enum WAVTool {
    static let usage = "usage: soundscape-bench wav level FILE | soundscape-bench wav tone FILE"

    static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2 else { return fail(usage) }
        let url = URL(fileURLWithPath: arguments[1])
        do {
            switch arguments[0] {
            case "level":
                let clip = try WAVFile.read(url)
                let tail = clip.slice(from: clip.duration / 2)
                guard tail.frameCount > 0 else { return fail("\(url.path): an empty recording") }
                print("\(decibels(tail.rmsDB())) \(decibels(tail.peakDB))")
            case "tone":
                let clip = AudioClip.sine(frequency: 300, amplitude: 9000 / 32768, seconds: 30, channels: 1)
                try WAVFile.write(clip, to: url, format: .int16)
            default:
                return fail(usage)
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
