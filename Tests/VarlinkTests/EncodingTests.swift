import NIOCore
import Testing
@testable import Varlink

@Suite struct EncodingTests {
    private func text(_ buffers: [ByteBuffer]) -> String {
        buffers.map { String(buffer: $0) }.joined()
    }

    @Test func finalReply() throws {
        let parameters = try VarlinkEncodedParameters(["volume": JSONValue.number(50), "name": "rain"])
        #expect(text(ReplyEncoding.reply(parameters, continues: false)) == #"{"parameters":{"name":"rain","volume":50}}"# + "\0")
    }

    @Test func continuingReply() throws {
        let parameters = try VarlinkEncodedParameters(["i": JSONValue.number(1)])
        #expect(text(ReplyEncoding.reply(parameters, continues: true)) == #"{"parameters":{"i":1},"continues":true}"# + "\0")
    }

    @Test func encodableStructReply() throws {
        struct Status: Encodable {
            var playing: Bool
            var url: String
        }
        let parameters = try VarlinkEncodedParameters(Status(playing: true, url: "https://example.org/a"))
        #expect(
            text(ReplyEncoding.reply(parameters, continues: false))
                == #"{"parameters":{"playing":true,"url":"https://example.org/a"}}"# + "\0")
    }

    @Test func wrappedPreEncodedObject() {
        let parameters = VarlinkEncodedParameters.wrapping(field: "event", jsonObject: Array(#"{"kind":"stopped"}"#.utf8))
        #expect(
            text(ReplyEncoding.reply(parameters, continues: true))
                == #"{"parameters":{"event":{"kind":"stopped"}},"continues":true}"# + "\0")
        let escaped = VarlinkEncodedParameters.wrapping(field: "a\"b", jsonObject: Array("{}".utf8))
        #expect(String(buffer: escaped.json) == #"{"a\"b":{}}"#)
    }

    @Test func replyParametersMustBeAnObject() {
        #expect(throws: EncodingError.self) { try VarlinkEncodedParameters([1, 2]) }
        #expect(throws: EncodingError.self) { try VarlinkEncodedParameters("text") }
    }

    @Test func errorReply() {
        #expect(
            String(buffer: ReplyEncoding.error(.invalidParameter(parameter: "volume")))
                == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"volume"}}"# + "\0")
        #expect(
            String(buffer: ReplyEncoding.error(.permissionDenied()))
                == #"{"error":"org.varlink.service.PermissionDenied","parameters":{}}"# + "\0")
    }

    @Test func errorWithUnencodableParametersStillGoesOut() {
        let error = VarlinkError(name: "org.example.Odd", parameters: ["value": .number(.infinity)])
        #expect(String(buffer: ReplyEncoding.error(error)) == #"{"error":"org.example.Odd","parameters":{}}"# + "\0")
    }

    @Test func call() throws {
        #expect(
            String(buffer: try CallEncoding.call("a.B", parameters: ["x": JSONValue.bool(true)], more: false))
                == #"{"method":"a.B","parameters":{"x":true}}"# + "\0")
        #expect(
            String(buffer: try CallEncoding.call("a.B", parameters: [String: JSONValue](), more: true))
                == #"{"method":"a.B","more":true,"parameters":{}}"# + "\0")
    }

    @Test func replyEnvelopes() throws {
        let plain = try JSONCoding.decode(ReplyEnvelope<[String: JSONValue]>.self, from: ByteBuffer(string: #"{"parameters":{"a":1}}"#))
        #expect(plain.continues == false)
        #expect(try plain.result.get() == ["a": 1])

        let continuing = try JSONCoding.decode(
            ReplyEnvelope<[String: JSONValue]>.self,
            from: ByteBuffer(string: #"{"parameters":{},"continues":true}"#)
        )
        #expect(continuing.continues)

        let empty = try JSONCoding.decode(ReplyEnvelope<[String: JSONValue]>.self, from: ByteBuffer(string: "{}"))
        #expect(try empty.result.get() == [:])

        let error = try JSONCoding.decode(
            ReplyEnvelope<[String: JSONValue]>.self,
            from: ByteBuffer(string: #"{"error":"a.Failed","parameters":{"why":"x"},"continues":true}"#)
        )
        #expect(error.continues == false)
        #expect(throws: VarlinkError(name: "a.Failed", parameters: ["why": "x"])) { try error.result.get() }
    }
}
