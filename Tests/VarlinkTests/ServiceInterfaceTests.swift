import Testing
@testable import Varlink

/// The built-in `org.varlink.service` interface, over a real socket.
@Suite struct ServiceInterfaceTests {
    @Test func getInfo() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                let info = try await client.call("org.varlink.service.GetInfo")
                #expect(
                    info == [
                        "vendor": "Example Vendor",
                        "product": "varlink-tests",
                        "version": "1.0",
                        "url": "https://example.org/varlink-tests",
                        "interfaces": ["org.varlink.service", "org.example.test"],
                    ])
            }
        }
    }

    @Test func getInterfaceDescription() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                let own = try await client.call(
                    "org.varlink.service.GetInterfaceDescription",
                    parameters: ["interface": "org.example.test"]
                )
                #expect(own["description"]?.stringValue == TestInterface().description)

                let service = try await client.call(
                    "org.varlink.service.GetInterfaceDescription",
                    parameters: ["interface": "org.varlink.service"]
                )
                #expect(service["description"]?.stringValue == ServiceInterface.idl)
                #expect(ServiceInterface.idl.hasPrefix("# The Varlink Service Interface is provided by every varlink service."))
                #expect(ServiceInterface.idl.contains("\ninterface org.varlink.service\n"))
                #expect(ServiceInterface.idl.contains("\nerror ExpectedMore ()\n"))

                await #expect(throws: VarlinkError.interfaceNotFound(interface: "org.example.nope")) {
                    try await client.call(
                        "org.varlink.service.GetInterfaceDescription",
                        parameters: ["interface": "org.example.nope"]
                    )
                }
                await #expect(throws: VarlinkError.invalidParameter(parameter: "interface")) {
                    try await client.call("org.varlink.service.GetInterfaceDescription")
                }
            }
        }
    }

    @Test func getInfoTakesNoParameters() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                await #expect(throws: VarlinkError.invalidParameter(parameter: "verbose")) {
                    try await client.call("org.varlink.service.GetInfo", parameters: ["verbose": true])
                }
            }
        }
    }
}
