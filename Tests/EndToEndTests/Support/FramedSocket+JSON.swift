import Foundation
import SoundscapeSystem
import TestSupport

/// The tests' raw varlink client is a blocking `FramedSocket`: it sends whatever
/// bytes a test gives it, including garbage a real client never would. These
/// read its replies as JSON objects.
extension FramedSocket {
    /// The next reply as a JSON object, or nil when the server closed the connection.
    func receiveObject() throws -> [String: Any]? {
        guard let message = try receiveMessage() else { return nil }
        guard let object = try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else {
            throw HarnessError("reply is not a JSON object: \(String(decoding: message, as: UTF8.self))")
        }
        return object
    }

    /// Sends one call and returns its reply.
    func call(json: String) throws -> [String: Any] {
        try sendMessage(json)
        guard let reply = try receiveObject() else { throw HarnessError("connection closed instead of a reply to \(json)") }
        return reply
    }
}

extension [String: Any] {
    var errorName: String? { self["error"] as? String }
    var errorParameter: String? { (self["parameters"] as? [String: Any])?["parameter"] as? String }
}
