#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Edits a folder's `manifest.json` as `soundscapectl import` and `remove` do: the bytes
/// in, the bytes out (the caller writes them to a temporary name and renames it over the
/// old one). Entries it does not touch keep their fields; a manifest that does not parse
/// is never overwritten (its owner wrote it by hand: it is theirs to mend).
public enum UserManifest {
    public struct Unreadable: Error, CustomStringConvertible {
        public let description: String
    }

    /// `existing` (nil: no manifest yet) with the entry for `id` added, or replacing the one there.
    public static func adding(
        id: String, title: String, file: String, gain: Float = 1, source: String?, credit: String?, to existing: [UInt8]?
    ) throws(Unreadable) -> [UInt8] {
        var manifest = try parse(existing)
        let item = Manifest.Item(id: id, title: title, file: file, gain: gain, source: source, credit: credit)
        if let index = manifest.soundscapes.firstIndex(where: { $0.id == id }) {
            manifest.soundscapes[index] = item
        } else {
            manifest.soundscapes.append(item)
        }
        return encode(manifest)
    }

    /// `existing` without the entry for `id`, and the file that entry named (nil: it had none).
    public static func removing(id: String, from existing: [UInt8]?) throws(Unreadable) -> (bytes: [UInt8], file: String?) {
        var manifest = try parse(existing)
        let file = manifest.soundscapes.first { $0.id == id }?.file
        manifest.soundscapes.removeAll { $0.id == id }
        return (encode(manifest), file)
    }

    /// The file the entry for `id` names, if the manifest has one.
    public static func file(of id: String, in existing: [UInt8]?) throws(Unreadable) -> String? {
        try parse(existing).soundscapes.first { $0.id == id }?.file
    }

    private static func parse(_ bytes: [UInt8]?) throws(Unreadable) -> Manifest {
        guard let bytes, !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }) else {
            return Manifest(default: nil, soundscapes: [])
        }
        do {
            return try JSONDecoder().decode(Manifest.self, from: Data(bytes))
        } catch {
            throw Unreadable(description: "it does not parse (\(error)); mend it or move it away")
        }
    }

    private static func encode(_ manifest: Manifest) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(manifest)).map { Array($0) } ?? Array("{\"soundscapes\": []}".utf8)) + [0x0A]
    }
}
