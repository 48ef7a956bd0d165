import NIOCore

/// Reply parameters serialized once, to be sent many times.
///
/// A server fanning one event out to many subscribers encodes it into this once and passes
/// it to every subscriber's ``VarlinkCall/reply(preEncoded:continues:)``; the bytes are
/// shared, not copied or re-encoded, per subscriber.
public struct VarlinkEncodedParameters: Sendable {
    /// A complete JSON object.
    let json: ByteBuffer

    /// Throws `EncodingError` unless `parameters` encodes as a JSON object, which is what
    /// varlink requires of reply parameters.
    public init(_ parameters: some Encodable) throws {
        let json = try JSONCoding.encode(parameters)
        guard json.readableBytesView.first == UInt8(ascii: "{") else {
            throw EncodingError.invalidValue(
                parameters,
                .init(codingPath: [], debugDescription: "varlink reply parameters must encode as a JSON object")
            )
        }
        self.json = json
    }

    /// `{"field": jsonObject}` around a JSON object that is already encoded, so an event
    /// encoded once can become the parameters of a reply without being decoded or encoded
    /// again. `jsonObject` must be a complete JSON object, e.g. from `JSONEncoder`; only its
    /// first byte is checked. Wrapping copies it, so wrap once and share the result when
    /// sending to many.
    public static func wrapping(field: String, jsonObject: [UInt8]) -> VarlinkEncodedParameters {
        precondition(jsonObject.first == UInt8(ascii: "{"), "the wrapped value must be a JSON object")
        // Encoding a string cannot fail; going through the encoder escapes any field name.
        let key = try! JSONCoding.encode(field)
        var json = ByteBuffer()
        json.reserveCapacity(key.readableBytes + jsonObject.count + 3)
        json.writeInteger(UInt8(ascii: "{"))
        json.writeImmutableBuffer(key)
        json.writeInteger(UInt8(ascii: ":"))
        json.writeBytes(jsonObject)
        json.writeInteger(UInt8(ascii: "}"))
        return VarlinkEncodedParameters(json: json)
    }

    private init(json: ByteBuffer) {
        self.json = json
    }
}
