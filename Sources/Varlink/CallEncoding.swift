import NIOCore

/// Builds the client's call messages, NUL terminator included.
enum CallEncoding {
    private struct CallMessage<Parameters: Encodable>: Encodable {
        var method: String
        var parameters: Parameters
        /// Omitted rather than `false` when unset, as the spec's examples do.
        var more: Bool?
    }

    static func call(_ method: String, parameters: some Encodable, more: Bool) throws -> ByteBuffer {
        var message = try JSONCoding.encode(CallMessage(method: method, parameters: parameters, more: more ? true : nil))
        message.writeInteger(UInt8(0))
        return message
    }
}
