#if FUZZING
import NIOCore
import SoundscapeCore
@testable import SoundscapeAudio
@testable import SoundscapeDaemon
@testable import SoundscapeLibrary
@testable import Varlink

enum FuzzTargets {
    static let names = [
        "varlink-frames", "varlink-request", "config", "ogg-pages", "manifest", "signer-lines",
        "notify-message", "env-file", "container-probe", "loop-plan",
    ]

    /// The first byte chooses where the rest is cut into reads; the frames must be
    /// the same however the bytes arrive, and no frame may be longer than the limit.
    static func varlinkFrames(_ bytes: [UInt8]) {
        guard let seed = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        let limit = 64
        func decode(_ reads: [ArraySlice<UInt8>]) -> [VarlinkFrame] {
            var decoder = VarlinkFrameDecoder(maxMessageBytes: limit)
            var buffer = ByteBuffer()
            var frames: [VarlinkFrame] = []
            for read in reads {
                buffer.writeBytes(read)
                while let frame = decoder.nextFrame(from: &buffer) { frames.append(frame) }
                buffer.discardReadBytes()
            }
            return frames
        }
        let whole = decode([input[...]])
        let pieces = decode(split(input, seed: seed))
        precondition(whole == pieces, "frames differ with how the bytes were read")
        for frame in whole {
            if case .message(let message) = frame { precondition(message.readableBytes <= limit, "a frame over the limit") }
        }
        precondition(whole.filter { $0 == .oversized }.count <= 1, "more than one oversized frame")
    }

    /// Any bytes as a call: parsed or refused with a named error; a parsed call
    /// encodes back to JSON that parses to the same call.
    static func varlinkRequest(_ bytes: [UInt8]) {
        let message = ByteBuffer(bytes: bytes)
        do throws(VarlinkError) {
            let request = try VarlinkRequest(parsing: message)
            var object: [String: JSONValue] = ["method": .string(request.method), "parameters": .object(request.parameters)]
            if request.more { object["more"] = .bool(true) }
            if request.oneway { object["oneway"] = .bool(true) }
            if request.upgrade { object["upgrade"] = .bool(true) }
            guard let encoded = try? JSONCoding.encode(JSONValue.object(object)) else {
                preconditionFailure("a parsed call does not encode")
            }
            let again = try VarlinkRequest(parsing: encoded)
            precondition(again == request, "a call does not survive encoding and parsing")
        } catch {
            precondition(
                error.name.hasPrefix("org.varlink.service.") || error.name.hasPrefix("org.swift-varlink."),
                "an unnamed error: \(error)")
        }
    }

    /// The config file: parsed, or refused with the line named (a line that exists).
    static func config(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            _ = try ConfigFile(parsing: text)
        } catch {
            let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).count
            precondition(error.line >= 1 && error.line <= max(lines, 1), "an error names line \(error.line) of \(lines)")
        }
        // The command's word splitting on its own, too: words never hold an unescaped quote's delimiters.
        _ = try? ShellWords.split(text)
    }

    /// The Ogg page walk: a verdict for any bytes, and one that agrees with a
    /// file made of them (which libopusfile then opens, or refuses).
    static func oggPages(_ bytes: [UInt8]) {
        let verdict = OggPageScan.truncation(in: bytes)
        if verdict == nil {
            precondition(bytes.count >= 4 && bytes.starts(with: [0x4F, 0x67, 0x67, 0x53]), "no verdict on a non-Ogg file")
        }
        if bytes.count <= 1 << 16, let data = try? SoundscapeData(id: SoundscapeID("fuzz")!, gain: 1, contents: bytes) {
            precondition(verdict == nil, "a file with a truncation verdict opened")
            precondition(data.frames > 0, "an opened file with no audio")
        }
    }

    /// A manifest: entries each valid (an id, a file inside the directory, a gain in range).
    static func manifest(_ bytes: [UInt8]) {
        let read = Manifest.read(bytes, directory: "/soundscapes", origin: .builtin)
        for entry in read.entries {
            // Bytes, as the kernel reads the path: a slash before a combining mark is one
            // Swift Character, and no slash to hasPrefix or contains.
            let directory = Array("/soundscapes/".utf8)
            let path = Array(entry.path.utf8)
            let name = path.dropFirst(directory.count)
            precondition(
                path.starts(with: directory) && !name.isEmpty && !name.contains(UInt8(ascii: "/"))
                    && !name.elementsEqual("..".utf8) && !name.elementsEqual(".".utf8),
                "an entry outside its directory: \(entry.path)")
            precondition(entry.gain > 0 && entry.gain <= 1, "a gain out of range")
        }
    }

    /// The signer's output: lines never longer than the limit, and no byte lost
    /// but the newlines and the CR before them, however the output arrives.
    static func signerLines(_ bytes: [UInt8]) {
        guard let seed = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        let limit = 32
        func decode(_ reads: [ArraySlice<UInt8>]) -> [String] {
            var buffer = ByteBuffer()
            var lines: [String] = []
            for read in reads {
                buffer.writeBytes(read)
                while let line = LineFrameDecoder.nextLine(from: &buffer, maximumLength: limit) { lines.append(line) }
                buffer.discardReadBytes()
            }
            return lines
        }
        let whole = decode([input[...]])
        let pieces = decode(split(input, seed: seed))
        precondition(whole == pieces, "lines differ with how the output was read")
        for line in whole { precondition(line.utf8.count <= limit * 3, "a line over the limit") }
    }

    /// A notify datagram: refused only for a NUL or its size; the same meaning whether its
    /// lines come in one datagram or several merged (the daemon coalesces a flood); a status
    /// line, once cleaned, one line of at most 200 characters with no control character.
    static func notifyMessage(_ bytes: [UInt8]) {
        guard let seed = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        guard let whole = SignerNotification(parsing: input) else {
            precondition(input.contains(0) || input.count > SignerNotification.maximumBytes, "a datagram refused for no reason")
            return
        }
        // Cut at line breaks drawn from the seed: each piece a datagram of its own.
        var merged = SignerNotification()
        var start = 0
        var state = UInt32(seed) | 0x1_0000
        for (index, byte) in input.enumerated() where byte == UInt8(ascii: "\n") {
            state = state &* 1_103_515_245 &+ 12_345
            guard (state >> 16) % 3 == 0 else { continue }
            merged.merge(SignerNotification(parsing: input[start..<index])!)
            start = index + 1
        }
        merged.merge(SignerNotification(parsing: input[start...])!)
        precondition(merged == whole, "merging datagrams changed their meaning")
        if let status = whole.status, let line = SignerStatus.line(status) {
            precondition(line.count <= SignerStatus.maximumStatusLength, "a status line over the limit")
            precondition(!line.unicodeScalars.contains { $0.properties.generalCategory == .control }, "a control character kept")
            precondition(line == SignerStatus.line(line), "cleaning a clean line changed it")
        }
    }

    /// A signer-env-file: parsed, or refused naming a line the file has; every name a valid
    /// variable name on a line the file has; and the variables, written back double-quoted
    /// (escaping what systemd unescapes there), parse to the same variables.
    static func environmentFile(_ bytes: [UInt8]) {
        let lines = bytes.filter { $0 == UInt8(ascii: "\n") }.count + 1
        let assignments: [EnvironmentFile.Assignment]
        do {
            assignments = try EnvironmentFile.parse(bytes)
        } catch {
            precondition(error.line >= 1 && error.line <= lines, "a refusal names line \(error.line) of \(lines)")
            return
        }
        for assignment in assignments {
            precondition(SettingParsers.isVariableName(assignment.name), "an invalid name taken")
            precondition(assignment.line >= 1 && assignment.line <= lines, "an assignment on line \(assignment.line) of \(lines)")
        }
        let variables = EnvironmentFile.variables(assignments)
        var written = ""
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) {
            var quoted = ""
            for character in value.unicodeScalars {
                if "\"\\`$".unicodeScalars.contains(character) { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(character)
            }
            written += "\(name)=\"\(quoted)\"\n"
        }
        guard let again = try? EnvironmentFile.parse(Array(written.utf8)) else {
            preconditionFailure("the variables written back do not parse")
        }
        precondition(EnvironmentFile.variables(again) == variables, "the variables written back parse differently")
    }

    /// `bytes` cut into reads at points drawn from `seed`.
    static func split(_ bytes: [UInt8], seed: UInt8) -> [ArraySlice<UInt8>] {
        var state = UInt32(seed) | 0x1_0000
        var reads: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            state = state &* 1_103_515_245 &+ 12_345
            let length = 1 + Int((state >> 16) % 17)
            reads.append(bytes[start..<min(bytes.count, start + length)])
            start += length
        }
        return reads
    }
}
#endif
