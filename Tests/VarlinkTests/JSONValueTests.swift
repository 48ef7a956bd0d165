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
