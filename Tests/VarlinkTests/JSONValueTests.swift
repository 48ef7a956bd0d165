import NIOCore
import Testing
@testable import Varlink

@Suite struct JSONValueTests {
    @Test func decodesEveryKind() throws {
        let value = try JSONCoding.decode(
            JSONValue.self,
            from: ByteBuffer(string: #"{"a":[1,true,null,"x",{"b":2.5}],"c":false,"d":0}"#)
        )
        #expect(value == ["a": [1, true, nil, "x", ["b": 2.5]], "c": false, "d": 0])
    }

    @Test func booleansAndNumbersStayDistinct() throws {
        #expect(
            try JSONCoding.decode(JSONValue.self, from: ByteBuffer(string: "[true,1,0,false]"))
                == .array([.bool(true), .number(1), .number(0), .bool(false)]))
    }

    @Test func integralNumbersEncodeWithoutAFraction() throws {
        #expect(String(buffer: try JSONCoding.encode(JSONValue.array([1, 2.5, -3]))) == "[1,2.5,-3]")
    }

    @Test func accessors() {
        let value: JSONValue = ["s": "x", "n": 2, "list": [1], "null": nil]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.intValue == 2)
        #expect(value["n"]?.doubleValue == 2)
        #expect(value["list"]?.arrayValue == [1])
        #expect(value["null"]?.isNull == true)
        #expect(value["s"]?.intValue == nil)
        #expect(value["missing"] == nil)
        #expect(JSONValue.string("x")["key"] == nil)
    }
}

@Suite struct JSONValueDescriptionTests {
    /// What a log line or a failed expectation shows is the JSON a peer reads.
    @Test func describesItselfAsTheJSONOnTheWire() throws {
        let value: JSONValue = ["b": [1, 2.5, -3, nil, true], "a": "x/\"y\"", "c": ["z": false]]
        #expect(value.description == #"{"a":"x/\"y\"","b":[1,2.5,-3,null,true],"c":{"z":false}}"#)
        #expect(value.description == String(buffer: try JSONCoding.encode(value)))
    }

    static let kinds: [(JSONValue, String)] = [
        (nil, "null"), (true, "true"), (false, "false"), (0, "0"), (42, "42"), (-0.5, "-0.5"),
        (1e300, "1e+300"), ("", #""""#), ("tab\there", #""tab\there""#), ([], "[]"), ([:], "{}"),
    ]

    @Test(arguments: kinds)
    func describesEveryKind(value: JSONValue, text: String) throws {
        #expect(value.description == text)
        #expect(try JSONCoding.decode(JSONValue.self, from: ByteBuffer(string: value.description)) == value)
    }

    /// NaN and the infinities are not JSON; the description still says what the value holds.
    @Test func spellsNumbersJSONCannotCarry() {
        let value: JSONValue = ["x": [.number(.nan), .number(.infinity)], "y": 1]
        #expect(value.description == #"{"x":[nan,inf],"y":1}"#)
        #expect(JSONValue.number(-.infinity).description == "-inf")
    }

    /// A varlink error's description shows its parameters as JSON, not as enum cases.
    @Test func anErrorShowsItsParametersAsJSON() {
        #expect(VarlinkError.messageTooLarge(limit: 4096).description.hasSuffix(#"["limit": 4096]"#))
    }
}
