import Foundation
import SoundscapeCore
import SoundscapeLibrary
import Testing
@testable import SoundscapeDaemon

/// The served IDL parses with every `varlinkctl` our users have.
///
/// systemd's IDL parser (src/shared/varlink-idl.c in 255 and 256,
/// src/libsystemd/sd-varlink/sd-varlink-idl.c from 257) takes a `#` comment
/// only where its state machine expects one. In 255 and 256 that is between
/// symbols: before `interface` and before each `type`, `method` or `error`
/// (STATE_PRE_INTERFACE, STATE_PRE_SYMBOL). Inside a symbol's `( … )`, or
/// between a method's input and its `->`, a `#` is an unexpected token and the
/// whole interface is refused: `varlinkctl introspect` warns and prints it raw,
/// `varlinkctl validate-idl` fails. 257 also takes a comment before a field
/// (systemd PR #32559, "v257 material"). Ubuntu 24.04 ships 255, so we keep to
/// the older rule; CI validates the interface with 257's `varlinkctl` on Debian 13.
@Suite struct PlayerInterfaceDefinitionTests {
    @Test func commentsStandOnlyBetweenSymbols() {
        let misplaced = IDLComments.misplaced(in: PlayerInterfaceDefinition.idl)
        #expect(
            misplaced.isEmpty,
            """
            systemd 255 and 256 refuse a comment inside a symbol; describe the field in its type's comment instead:
            \(misplaced.map { "line \($0.line): \($0.text)" }.joined(separator: "\n"))
            """)
    }

    /// Types, methods and errors share one namespace: systemd's parser (257, `varlinkctl
    /// validate-idl`) refuses the whole interface for a name defined twice, as it did for
    /// a `type Sleep` beside `method Sleep`.
    @Test func everySymbolIsDefinedOnce() {
        let names = PlayerInterfaceDefinition.idl.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard words.count >= 2, ["type", "method", "error"].contains(words[0]) else { return nil }
            return String(words[1].prefix { $0 != "(" })
        }
        #expect(names.count > 20)
        #expect(Set(names).count == names.count, "defined twice: \(Dictionary(grouping: names) { $0 }.filter { $1.count > 1 }.keys.sorted())")
    }

    @Test func theIDLIsDocumented() {
        // Keeping 255's rule must not have cost the documentation of the fields.
        let idl = PlayerInterfaceDefinition.idl
        #expect(idl.hasPrefix("# Control and events of soundscaped"))
        #expect(idl.contains("#   isPlaying: true only while the soundscape really flows to a sink.\n"))
        #expect(idl.contains("# The subscriber fell more than `limit` events behind and was dropped.\nerror SubscriberTooSlow"))
    }

    /// An event is its own fields and then the whole status, flat: the IDL says so from one list.
    @Test func anEventCarriesEveryStatusFieldAfterItsOwn() throws {
        let idl = PlayerInterfaceDefinition.idl
        let status = try #require(IDLFields.of(type: "Status", in: idl))
        let event = try #require(IDLFields.of(type: "Event", in: idl))
        let statusNames = [
            "state", "isPlaying", "soundscape", "layers", "mix", "volume", "route", "noSink", "wantsPlaying", "signer",
            "interruptions", "ducked", "cuePlaying", "keepAwake", "sleep", "version",
        ]
        #expect(status.map(\.name) == statusNames)
        #expect(event.map(\.name) == ["seq", "time", "type", "reason", "message", "cause"] + status.map(\.name))
        #expect(Array(event.suffix(status.count)).map(\.type) == status.map(\.type), "the same types too")
        #expect(status.first?.type == "(" + PlayerState.allCases.map(\.rawValue).joined(separator: ", ") + ")")
    }

    /// The IDL names what the daemon sends: every key `PlayerStatus` and `PlayerEvent` encode, and no other.
    @Test func theIDLNamesEveryFieldTheDaemonSends() throws {
        let idl = PlayerInterfaceDefinition.idl
        let status = PlayerStatus(
            state: .playing, isPlaying: true, soundscape: try #require(SoundscapeID("rain")), volume: Volume(clamping: 37),
            route: "speaker", wantsPlaying: true)
        let event = PlayerEvent(
            seq: 1, time: Timestamp(millisecondsSince1970: 0), type: .player, reason: .started, message: "m", cause: "c",
            status: status)
        func keys(_ value: some Encodable) throws -> Set<String> {
            let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any]
            return Set(try #require(object).keys)
        }
        #expect(Set(try #require(IDLFields.of(type: "Status", in: idl)).map(\.name)) == (try keys(status)))
        #expect(Set(try #require(IDLFields.of(type: "Event", in: idl)).map(\.name)) == (try keys(event)))
    }

    /// A `Soundscape` in the IDL is what `ListSoundscapes` sends for an entry: every key, the optional ones too.
    @Test func theIDLNamesEverySoundscapeField() throws {
        let entry = SoundscapeEntry(
            id: try #require(SoundscapeID("creek")), title: "Creek", path: "/x/creek.opus", gain: 1, origin: .user,
            unplayable: "not Ogg Opus", source: "creek.wav", credit: "me, CC0")
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(SoundscapeInfo(entry: entry, isDefault: false)))
        let keys = Set(try #require(object as? [String: Any]).keys)
        let fields = try #require(IDLFields.of(type: "Soundscape", in: PlayerInterfaceDefinition.idl))
        #expect(Set(fields.map(\.name)) == keys)
        #expect(fields.first { $0.name == "credit" }?.type == "?string")
    }

    /// The rule's checker finds what 255 refuses, and passes what it takes.
    @Test(arguments: [
        ("interface a.b\ntype T (\n  # no\n  x: int\n)\n", [3]),
        ("interface a.b\ntype T (x: int, # no\n  y: int)\n", [2]),
        ("interface a.b\ntype T (\n  e: (one, # no\n  two)\n)\n", [3]),
        ("interface a.b\nmethod M(x: int) # no\n  -> ()\n", [2]),
        ("interface a.b\nmethod M # no\n(x: int) -> ()\n", [2]),
        ("interface a.b\nmethod M(\n  # no\n) -> ()\n", [3]),
        ("interface a.b\nmethod M() -> (\n  # no\n  x: int\n)\n", [3]),
        ("interface a.b\nerror E (\n  # no\n  x: int)\n", [3]),
        ("# yes\ninterface a.b\n# yes\ntype T (x: int)\n\n# yes\nmethod M(x: int) -> (y: T)\n# yes\nerror E ()\n# yes\n", []),
        ("interface a.b\ntype T (x: (y: int), z: int)\n# yes\nmethod M() -> ()\n", []),
    ])
    func theCheckerFollowsSystemd255(idl: String, misplacedLines: [Int]) {
        #expect(IDLComments.misplaced(in: idl).map(\.line) == misplacedLines)
    }
}

/// Where systemd 255 and 256 accept a `#` comment in a varlink IDL: only
/// between symbols. The grammar is small enough to follow here: a symbol
/// starts with its keyword, `interface` ends with its name, `type` and `error`
/// with their one top-level `( … )`, `method` with its second one (after `->`).
enum IDLComments {
    static func misplaced(in idl: String) -> [(line: Int, text: String)] {
        var result: [(line: Int, text: String)] = []
        var line = 1
        var depth = 0
        // Top-level `( … )` still to close before the current symbol ends; -1: `interface`, ended by its name.
        var structsToClose = 0
        var betweenSymbols = true
        var word = ""
        var chars = Array(idl)[...]

        func endWord() {
            defer { word = "" }
            guard !word.isEmpty, depth == 0 else { return }
            if betweenSymbols {
                switch word {
                case "interface": structsToClose = -1; betweenSymbols = false
                case "type", "error": structsToClose = 1; betweenSymbols = false
                case "method": structsToClose = 2; betweenSymbols = false
                default: break
                }
            } else if structsToClose == -1 && word != "interface" {
                betweenSymbols = true  // the interface's name
            }
        }

        while let c = chars.popFirst() {
            switch c {
            case "#":
                endWord()
                var text = "#"
                while let next = chars.first, next != "\n" { text.append(chars.removeFirst()) }
                if !betweenSymbols || depth > 0 { result.append((line, text)) }
            case "\n":
                endWord()
                line += 1
            case "(":
                endWord()
                depth += 1
            case ")":
                endWord()
                depth -= 1
                if depth == 0 && structsToClose > 0 {
                    structsToClose -= 1
                    if structsToClose == 0 { betweenSymbols = true }
                }
            case _ where c.isLetter || c.isNumber || c == "_" || c == "." || (c == "-" && !word.isEmpty):
                word.append(c)
            default:
                endWord()
            }
        }
        endWord()
        return result
    }
}

/// The fields of one `type` in an IDL, as name and type text (an enum's members in their parentheses).
enum IDLFields {
    static func of(type name: String, in idl: String) -> [(name: String, type: String)]? {
        guard let start = idl.range(of: "\ntype \(name) (") else { return nil }
        var depth = 1
        var field = ""
        var fields: [(name: String, type: String)] = []
        func endField() {
            let parts = field.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            if parts.count == 2 { fields.append((parts[0], parts[1])) }
            field = ""
        }
        for c in idl[start.upperBound...] {
            switch c {
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 1:
                endField()
                continue
            default: break
            }
            if depth == 0 {
                endField()
                return fields
            }
            field.append(c)
        }
        return nil
    }
}
