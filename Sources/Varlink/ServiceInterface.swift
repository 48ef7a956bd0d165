/// `org.varlink.service`, which every varlink service provides so that generic clients
/// (varlinkctl, the varlink CLI) can discover what it is and what it speaks.
struct ServiceInterface: VarlinkInterface {
    static let interfaceName = "org.varlink.service"

    let info: VarlinkServer.ServiceInfo
    /// Every served interface's description by name, this one included; names in serving order.
    let descriptions: [String: String]
    let interfaceNames: [String]

    init(info: VarlinkServer.ServiceInfo, serving others: [any VarlinkInterface]) {
        self.info = info
        interfaceNames = [Self.interfaceName] + others.map(\.name)
        descriptions = Dictionary(
            uniqueKeysWithValues: [(Self.interfaceName, Self.idl)] + others.map { ($0.name, $0.description) }
        )
    }

    var name: String { Self.interfaceName }
    var description: String { Self.idl }

    func handle(_ call: VarlinkCall) async throws {
        switch call.unqualifiedMethod {
        case "GetInfo":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(GetInfoReply(info: info, interfaces: interfaceNames))
        case "GetInterfaceDescription":
            try call.parameters.rejectUnknown(allowed: ["interface"])
            let interface = try call.parameters.string("interface")
            guard let description = descriptions[interface] else {
                throw VarlinkError.interfaceNotFound(interface: interface)
            }
            try await call.reply(["description": description])
        default:
            throw call.methodNotFound
        }
    }

    private struct GetInfoReply: Encodable, Sendable {
        var vendor, product, version, url: String
        var interfaces: [String]

        init(info: VarlinkServer.ServiceInfo, interfaces: [String]) {
            (vendor, product, version, url) = (info.vendor, info.product, info.version, info.url)
            self.interfaces = interfaces
        }
    }

    /// The standard definition, as published on varlink.org.
    static let idl = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """
}
