import Glibc

/// Why a recording was refused or its import failed: said to the user after the file's name.
public enum ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(String)
    case unsupported(String)
    case truncated(declared: Double, read: Double)
    case damaged(String)
    case tooLong
    case plan(LoopPlanError)
    case encoder(String)
    /// The output could not be written: the errno (ENOSPC: the disk is full).
    case write(Int32)
    case sandbox(String)

    public var description: String {
        switch self {
        case .unreadable(let why): "not a recording soundscapectl can read (\(why))"
        case .unsupported(let why): why
        case .truncated(let declared, let read):
            "the file is damaged or cut short: its header promises \(LoopPlanError.format(declared)) s, only \(LoopPlanError.format(read)) s could be read"
        case .damaged(let why): why
        case .tooLong: "longer than the limit of \(Int(LoopPlanner.maximumSeconds / 60)) minutes"
        case .plan(let error): error.description
        case .encoder(let why): "the Opus encoder failed: \(why)"
        case .write(let code): "writing the soundscape failed: \(String(cString: strerror(code)))"
        case .sandbox(let why): "cannot confine the decoder: \(why)"
        }
    }
}
