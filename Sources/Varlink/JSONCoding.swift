#if canImport(FoundationEssentials)
import FoundationEssentials
#else
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#endif
import NIOCore

/// The one place that decides how varlink JSON is written and read.
enum JSONCoding {
    /// Sorted keys make the wire output deterministic (diffable logs, exact tests); unescaped
    /// slashes keep URLs such as GetInfo's readable.
    static func encode(_ value: some Encodable) throws -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ByteBuffer(bytes: try encoder.encode(value))
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: ByteBuffer) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes.readableBytesView))
    }
}
