/// An error reply: what a handler throws to answer a call with a varlink error, and what
/// ``VarlinkClient`` throws when the service answers with one.
public struct VarlinkError: Error, Sendable, Hashable {
    /// Fully qualified error name, e.g. `org.varlink.service.InvalidParameter`.
    public var name: String
    public var parameters: [String: JSONValue]

    public init(name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }
}

// MARK: - Standard errors of the org.varlink.service interface

extension VarlinkError {
    public static func interfaceNotFound(interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }

    /// `method` is the fully qualified name the client called.
    public static func methodNotFound(method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }

    public static func methodNotImplemented(method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotImplemented", parameters: ["method": .string(method)])
    }

    public static func invalidParameter(parameter: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }

    public static func permissionDenied() -> VarlinkError {
        VarlinkError(name: "org.varlink.service.PermissionDenied")
    }

    public static func expectedMore() -> VarlinkError {
        VarlinkError(name: "org.varlink.service.ExpectedMore")
    }
}

// MARK: - Errors of this implementation

extension VarlinkError {
    /// Interface name for the few failures that the varlink standard has no error for.
    ///
    /// They get their own namespace rather than squatting on `org.varlink.service`, so a
    /// client can tell a standard error from one this implementation made up.
    public static let implementationInterface = "org.swift-varlink"

    /// Sent when a handler fails with something other than a ``VarlinkError``. The
    /// underlying error is logged on the server, never sent: it may describe internals.
    public static func internalError() -> VarlinkError {
        VarlinkError(name: "\(implementationInterface).InternalError")
    }

    /// Sent before closing a connection whose client sent more than `limit` bytes without
    /// ending the message: the server cannot find the next message boundary, so it gives up
    /// on the connection rather than buffering without bound.
    /// Too many connections hold unfinished messages; this one is closed.
    public static func serverBusy() -> VarlinkError {
        VarlinkError(name: "\(implementationInterface).ServerBusy")
    }

    public static func messageTooLarge(limit: Int) -> VarlinkError {
        VarlinkError(name: "\(implementationInterface).MessageTooLarge", parameters: ["limit": .number(Double(limit))])
    }
}

extension VarlinkError: CustomStringConvertible {
    public var description: String {
        parameters.isEmpty ? name : "\(name) \(parameters)"
    }
}
