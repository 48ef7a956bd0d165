/// A signer instance that runs, as the supervisor holds it: its number
/// (`SignerInstances`), its process group, and the task that watches it.
final class RunningSigner: Sendable {
    let id: Int
    let pid: Int32
    /// Sends a signal to its whole process group.
    private let sendSignal: @Sendable (Int32) -> Void
    let task: Task<Void, Never>

    init(id: Int, pid: Int32, signal: @escaping @Sendable (Int32) -> Void, task: Task<Void, Never>) {
        self.id = id
        self.pid = pid
        sendSignal = signal
        self.task = task
    }

    convenience init(id: Int, process: SignerProcess, task: Task<Void, Never>) {
        self.init(id: id, pid: process.pid, signal: { process.signal($0) }, task: task)
    }

    func signal(_ signal: Int32) {
        sendSignal(signal)
    }
}
