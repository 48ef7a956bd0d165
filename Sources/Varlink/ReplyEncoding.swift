import NIOCore

/// Builds the server's outgoing messages, NUL terminator included.
enum ReplyEncoding {
    private static let parametersPrefix = ByteBuffer(string: #"{"parameters":"#)
    private static let finalSuffix = ByteBuffer(string: "}\0")
    private static let continuesSuffix = ByteBuffer(string: #","continues":true}"# + "\0")

    /// A reply as separate buffers around the shared parameters, so a pre-encoded payload
    /// goes out to each subscriber without being copied; the writer sends them with one writev.
    static func reply(_ parameters: VarlinkEncodedParameters, continues: Bool) -> [ByteBuffer] {
        [parametersPrefix, parameters.json, continues ? continuesSuffix : finalSuffix]
    }

    static func error(_ error: VarlinkError) -> ByteBuffer {
        struct ErrorMessage: Encodable {
            var error: String
            var parameters: [String: JSONValue]
        }
        // Only a non-finite number can fail to encode; a handler's error is not worth losing
        // the reply over, so it goes out without its parameters.
        var message =
            (try? JSONCoding.encode(ErrorMessage(error: error.name, parameters: error.parameters)))
            ?? (try! JSONCoding.encode(ErrorMessage(error: error.name, parameters: [:])))
        message.writeInteger(UInt8(0))
        return message
    }
}
