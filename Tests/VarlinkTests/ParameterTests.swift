import Testing
@testable import Varlink

@Suite struct ParameterTests {
    let parameters = VarlinkParameters([
        "name": "rain",
        "volume": 50,
        "half": 50.5,
        "numeric": "50",
        "loop": true,
        "nothing": nil,
        "huge": .number(1e19),
    ])

    @Test func presentValuesOfTheRightType() throws {
        #expect(try parameters.string("name") == "rain")
        #expect(try parameters.int("volume") == 50)
        #expect(try parameters.bool("loop") == true)
        #expect(try parameters.optionalString("name") == "rain")
        #expect(try parameters.optionalInt("volume") == 50)
        #expect(try parameters.optionalBool("loop") == true)
    }

    @Test func missingOrNullIsAbsentForOptionalsAndInvalidForRequired() throws {
        #expect(try parameters.optionalString("missing") == nil)
        #expect(try parameters.optionalInt("nothing") == nil)
        #expect(try parameters.optionalBool("missing") == nil)
        #expect(throws: VarlinkError.invalidParameter(parameter: "missing")) { try parameters.string("missing") }
        #expect(throws: VarlinkError.invalidParameter(parameter: "nothing")) { try parameters.int("nothing") }
        #expect(throws: VarlinkError.invalidParameter(parameter: "missing")) { try parameters.bool("missing") }
    }

    @Test func wrongTypeNamesTheParameter() {
        #expect(throws: VarlinkError.invalidParameter(parameter: "volume")) { try parameters.string("volume") }
        #expect(throws: VarlinkError.invalidParameter(parameter: "name")) { try parameters.optionalBool("name") }
        #expect(throws: VarlinkError.invalidParameter(parameter: "loop")) { try parameters.int("loop") }
    }

    @Test func integersMustBeIntegralNumbersInRange() {
        #expect(throws: VarlinkError.invalidParameter(parameter: "half")) { try parameters.int("half") }
        #expect(throws: VarlinkError.invalidParameter(parameter: "numeric")) { try parameters.int("numeric") }
        #expect(throws: VarlinkError.invalidParameter(parameter: "huge")) { try parameters.optionalInt("huge") }
        #expect(JSONValue.number(-0x1p63).intValue == Int.min)
        #expect(JSONValue.number(0x1p63).intValue == nil)
        #expect(JSONValue.number(.nan).intValue == nil)
    }

    @Test func unknownParametersAreRejectedByName() throws {
        let given = VarlinkParameters(["volume": 1, "volum": 2, "zzz": 3])
        #expect(throws: VarlinkError.invalidParameter(parameter: "volum")) {
            try given.rejectUnknown(allowed: ["volume"])
        }
        try given.rejectUnknown(allowed: ["volume", "volum", "zzz", "extra"])
    }
}
