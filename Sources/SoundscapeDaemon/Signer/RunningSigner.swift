/// A signer instance that runs, as the supervisor holds it: its number
/// (`SignerInstances`), its process group, and the task that watches it.
final class RunningSigner: Sendable {
    let id: Int
    let process: SignerProcess
    let task: Task<Void, Never>

    init(id: Int, process: SignerProcess, task: Task<Void, Never>) {
        self.id = id
        self.process = process
        self.task = task
    }

    var pid: Int32 { process.pid }

    func signal(_ signal: Int32) {
        process.signal(signal)
    }
}
