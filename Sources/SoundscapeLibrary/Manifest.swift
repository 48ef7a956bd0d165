#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// `manifest.json` beside the built-in loops:
/// `{"default": "ocean-waves", "soundscapes": [{"id", "title", "file", "gain"}]}`.
struct Manifest: Decodable {
    struct Item: Decodable {
        var id: String
        var title: String?
        var file: String
        var gain: Float?
    }

    var `default`: String?
    var soundscapes: [Item]
}
