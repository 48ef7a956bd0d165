import NIOCore

/// A reply as the client decodes it, with the parameters decoded straight into the
/// caller's type.
struct ReplyEnvelope<Parameters: Decodable>: Decodable {
    /// Never set for an error reply: an error always ends its call.
    var continues: Bool
    var result: Result<Parameters, VarlinkError>

    private enum CodingKeys: String, CodingKey {
        case parameters, continues, error
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let name = try container.decodeIfPresent(String.self, forKey: .error) {
            let parameters = try container.decodeIfPresent([String: JSONValue].self, forKey: .parameters)
            result = .failure(VarlinkError(name: name, parameters: parameters ?? [:]))
            continues = false
            return
        }
        continues = try container.decodeIfPresent(Bool.self, forKey: .continues) ?? false
        // A reply without parameters means an empty object.
        result = .success(
            container.contains(.parameters)
                ? try container.decode(Parameters.self, forKey: .parameters)
                : try JSONCoding.decode(Parameters.self, from: ByteBuffer(string: "{}"))
        )
    }
}
