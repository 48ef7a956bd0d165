import NIOCore
import Testing
@testable import Varlink

@Suite struct RequestParsingTests {
    private func parse(_ json: String) throws(VarlinkError) -> VarlinkRequest {
        try VarlinkRequest(parsing: ByteBuffer(string: json))
    }

    private func rejection(_ json: String) -> VarlinkError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func validCall() throws {
        let request = try parse(#"{"method":"org.example.test.Add","parameters":{"a":1,"b":2}}"#)
        #expect(request.method == "org.example.test.Add")
        #expect(request.parameters == ["a": 1, "b": 2])
        #expect(!request.more && !request.oneway && !request.upgrade)
    }

    @Test func parametersMayBeMissingOrNull() throws {
        #expect(try parse(#"{"method":"a.B"}"#).parameters == [:])
        #expect(try parse(#"{"method":"a.B","parameters":null}"#).parameters == [:])
    }

    @Test func flags() throws {
        let more = try parse(#"{"method":"a.B","more":true}"#)
        #expect(more.more && !more.oneway && !more.upgrade)
        let oneway = try parse(#"{"method":"a.B","oneway":true,"more":false}"#)
        #expect(oneway.oneway && !oneway.more)
        #expect(try parse(#"{"method":"a.B","upgrade":true}"#).upgrade)
        #expect(try parse(#"{"method":"a.B","more":null}"#).more == false)
    }

    @Test(arguments: [
        "not json",
        "",
        "[1,2]",
        "\"a.B\"",
        #"{"parameters":{}}"#,
        #"{"method":42}"#,
        #"{"method":null}"#,
    ])
    func malformedCallsBlameMethod(json: String) {
        #expect(rejection(json) == .invalidParameter(parameter: "method"))
    }

    @Test func wronglyTypedFieldsAreNamed() {
        #expect(rejection(#"{"method":"a.B","parameters":[1]}"#) == .invalidParameter(parameter: "parameters"))
        #expect(rejection(#"{"method":"a.B","more":"yes"}"#) == .invalidParameter(parameter: "more"))
        #expect(rejection(#"{"method":"a.B","oneway":1}"#) == .invalidParameter(parameter: "oneway"))
        #expect(rejection(#"{"method":"a.B","upgrade":{}}"#) == .invalidParameter(parameter: "upgrade"))
    }

    @Test func moreAndOnewayContradict() {
        #expect(rejection(#"{"method":"a.B","more":true,"oneway":true}"#) == .invalidParameter(parameter: "oneway"))
    }

    @Test func methodNameSplitsAtTheLastDot() {
        #expect(MethodName("org.example.test.Add") == MethodName(interface: "org.example.test", method: "Add"))
        #expect(MethodName("a.B") == MethodName(interface: "a", method: "B"))
        #expect(MethodName("Add") == nil)
        #expect(MethodName("org.example.") == nil)
        #expect(MethodName(".Add") == nil)
        #expect(MethodName("") == nil)
    }
}

extension MethodName {
    init(interface: String, method: String) {
        self.init("\(interface).\(method)")!
    }
}
