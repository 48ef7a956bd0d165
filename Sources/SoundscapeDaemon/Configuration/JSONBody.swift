#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SoundscapeCore
import Varlink

/// A JSON document as the condition walks it: Varlink's `JSONValue`, parsed by
/// FoundationEssentials' `JSONDecoder` (top-level scalars included).
struct JSONBody: JSONNode {
    let value: JSONValue

    init(_ value: JSONValue) {
        self.value = value
    }

    /// Nil when `bytes` are not one JSON value.
    init?(parsing bytes: some Sequence<UInt8>) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return nil }
        self.value = value
    }

    /// Why `text` is not one JSON value, nil when it is (`SettingContext.checkJSON`).
    static func problem(_ text: String) -> String? {
        JSONBody(parsing: Array(text.utf8)) == nil ? "JSON cannot read it" : nil
    }

    /// As JSON; a scalar without a JSON encoder (a passing check writes one every interval).
    var text: String {
        switch value {
        case .null: "null"
        case .bool(let bool): bool ? "true" : "false"
        case .number(let number) where number.rounded() == number && abs(number) < 1e15: String(Int64(number))
        default: value.description
        }
    }

    func member(_ name: String) -> JSONBody? { value[name].map(JSONBody.init) }
    var elements: [JSONBody]? { value.arrayValue?.map(JSONBody.init) }
}
