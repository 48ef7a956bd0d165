#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore
import SoundscapeSystem

/// `manifest.json` beside the built-in loops:
/// `{"default": "ocean-waves", "soundscapes": [{"id", "title", "file", "gain"}]}`; an
/// imported recording's entry (`soundscapectl import`, in the user's folder) also has
/// `source` (the recording's file name) and, when given, `credit` (author, licence).
struct Manifest: Codable {
    struct Item: Codable {
        var id: String
        var title: String?
        var file: String
        var gain: Float?
        var source: String?
        var credit: String?
    }

    var `default`: String?
    var soundscapes: [Item]
}

extension Manifest {
    /// What a manifest's bytes say: the entries it lists (each checked), the files
    /// it names (a refused entry's file must not come back as a bare file under
    /// another name), the default, and every problem in words. Pure, so that any
    /// bytes can be thrown at it (Fuzz/).
    static func read(_ bytes: [UInt8], directory: String, origin: SoundscapeEntry.Origin)
        -> (entries: [SoundscapeEntry], listedFiles: Set<String>, defaultID: SoundscapeID?, problems: [String])
    {
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: Data(bytes))
        } catch {
            return ([], [], nil, ["\(error)"])
        }
        var entries: [SoundscapeEntry] = []
        var listed = Set<String>()
        var problems: [String] = []
        for item in manifest.soundscapes {
            listed.insert(item.file)
            guard let id = SoundscapeID(item.id) else {
                problems.append("invalid soundscape id '\(item.id)'")
                continue
            }
            guard FilePaths.isPlainName(item.file) else {
                problems.append("'\(item.id)' names a file outside its directory")
                continue
            }
            let gain = item.gain ?? 1
            guard gain > 0, gain <= 1 else {
                problems.append("'\(item.id)' has gain \(gain), expected 0 < gain ≤ 1")
                continue
            }
            entries.append(
                SoundscapeEntry(
                    id: id, title: item.title ?? item.id, path: FilePaths.join(directory, item.file),
                    gain: gain, origin: origin, source: item.source, credit: item.credit))
        }
        return (entries, listed, manifest.default.flatMap(SoundscapeID.init), problems)
    }
}
