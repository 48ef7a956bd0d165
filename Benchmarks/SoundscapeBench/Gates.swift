import Foundation
import NIOCore
import NIOPosix
import TestSupport

/// CI's budgets, as modes of the bench (`.ci/run` runs them through `scripts/bench`):
///
///     soundscape-bench memory [--compare] [--fresh] [--daemon PATH] [BUDGET_KB]   (default 16384)
///     soundscape-bench health-cost [--daemon PATH] [BUDGET_MS]                    (default 1)
///
/// Each starts a private PipeWire graph with a null sink, runs the release daemon in it
/// (`--daemon`, default the soundscaped beside this executable), prints what it measured
/// with the budget, and exits 1 when the figure is over it (2 on a usage error, 70 when
/// the measurement itself failed).
///
/// memory: the daemon plays the default soundscape from a fresh state and cache, five
/// seconds of steady playback (refills, the PCM cache's first build, a status query);
/// its peak RSS (VmHWM, its whole life, startup included) must be within the budget.
/// RSS and PSS (shared pages divided among their users) are printed beside it.
/// --compare plays the same link without the code layout too
/// (BIN/layout/soundscaped-unordered, which packaging/release/build makes) and prints
/// what the layout saves; --fresh plays the link with a layout from a fresh profile
/// (BIN/layout/fresh/soundscaped: packaging/release/build --fresh-profile, which
/// scripts/check-layout runs) and prints what the committed profile costs against it.
///
/// health-cost: the built-in HTTP health check's CPU per check, from the keep-alive
/// bench (KeepAliveBench.perCheckCost): a daemon with the igloo-server stand-in as its
/// signer and no check, then one checked every 0.05 s for 160 checks; the CPU off the
/// data thread (schedstat) beyond the unchecked daemon's, per check answered
/// (docs/performance.md, "The keep-alive as a whole": under 1 ms).
enum Gate: String {
    case memory
    case healthCost = "health-cost"

    var usage: String {
        switch self {
        case .memory: "usage: soundscape-bench memory [--compare] [--fresh] [--daemon PATH] [BUDGET_KB]"
        case .healthCost: "usage: soundscape-bench health-cost [--daemon PATH] [BUDGET_MS]"
        }
    }

    func run(_ arguments: [String]) async -> Int32 {
        var flags: Set<String> = []
        var daemon = Bench.defaultDaemonPath()
        var budget: Double?
        var i = 0
        let known: Set<String> = self == .memory ? ["--compare", "--fresh"] : []
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--daemon", i + 1 < arguments.count {
                daemon = URL(fileURLWithPath: arguments[i + 1]).standardizedFileURL.path
                i += 1
            } else if known.contains(argument) {
                flags.insert(argument)
            } else if argument == "-h" || argument == "--help" {
                print(usage)
                return 0
            } else if budget == nil, let value = Double(argument), value > 0 {
                budget = value
            } else {
                FileHandle.standardError.write(Data("\(usage)\n".utf8))
                return 2
            }
            i += 1
        }
        let signals = Bench.installSignalHandlers()
        defer { signals.forEach { $0.cancel() } }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let status = await measure(budget: budget, flags: flags, daemon: daemon, group: group)
        try? await group.shutdownGracefully()
        return status
    }

    private func measure(budget: Double?, flags: Set<String>, daemon: String, group: any EventLoopGroup) async -> Int32 {
        guard let graph = Bench.startGraph() else { return 70 }
        defer { Cleanup.shared.run() }
        do {
            let passed: Bool
            switch self {
            case .memory:
                passed = try await MemoryGate(graph: graph, group: group, daemon: daemon).run(
                    budgetKB: Int(budget ?? 16384), compare: flags.contains("--compare"), fresh: flags.contains("--fresh"))
            case .healthCost:
                passed = try await HealthCostGate(graph: graph, group: group, daemon: daemon).run(budgetMs: budget ?? 1)
            }
            let errors = DaemonUnderTest.loggedErrors(in: graph)
            if !errors.isEmpty {
                log("error: soundscaped logged errors:\n" + errors.joined(separator: "\n"))
                return 1
            }
            return passed ? 0 : 1
        } catch {
            log("error: \(error)")
            return 70
        }
    }
}

struct MemoryGate {
    let graph: PipeWireGraph
    let group: any EventLoopGroup
    let daemon: String

    struct Memory {
        var peakKB: Int
        var residentKB: Int
        var proportionalKB: Int
        var line: String { "peak RSS \(peakKB) kB, RSS \(residentKB) kB, PSS \(proportionalKB) kB" }
        static func - (a: Memory, b: Memory) -> Memory {
            Memory(peakKB: a.peakKB - b.peakKB, residentKB: a.residentKB - b.residentKB, proportionalKB: a.proportionalKB - b.proportionalKB)
        }
    }

    func run(budgetKB: Int, compare: Bool, fresh: Bool) async throws -> Bool {
        let layout = URL(fileURLWithPath: daemon).deletingLastPathComponent().appendingPathComponent("layout")
        let ordered = try await measure(daemon, run: 1)
        print(
            "release soundscaped, playing: peak RSS \(ordered.peakKB) kB (budget \(budgetKB) kB), RSS \(ordered.residentKB) kB, PSS \(ordered.proportionalKB) kB"
        )
        if fresh {
            let path = layout.appendingPathComponent("fresh/soundscaped").path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw HarnessError("no fresh layout (\(path)): packaging/release/build --fresh-profile makes one")
            }
            let other = try await measure(path, run: 2)
            print("the same link with a layout from a fresh profile of this build: \(other.line)")
            print("the committed profile costs, measured: \((ordered - other).line) (negative: it costs less)")
        }
        if compare {
            let other = try await measure(layout.appendingPathComponent("soundscaped-unordered").path, run: 3)
            print("the same link without the code layout: \(other.line)")
            print("the code layout saves: \((other - ordered).line)")
        }
        guard ordered.peakKB <= budgetKB else {
            log("error: peak RSS \(ordered.peakKB) kB is over the budget of \(budgetKB) kB (docs/performance.md says what keeps it down)")
            return false
        }
        log("release build plays within its memory budget")
        return true
    }

    /// Plays `binary` from a fresh state and cache of its own, then reads its memory.
    private func measure(_ binary: String, run: Int) async throws -> Memory {
        let state = graph.directory.appendingPathComponent("memory-\(run)")
        let daemon = DaemonUnderTest(
            graph: graph, executable: binary, extraArguments: ["--cache-dir", state.appendingPathComponent("cache").path], group: group,
            stateDirectory: state)
        try await daemon.start()
        do {
            try await daemon.call("Play")
            try await daemon.waitForState("playing", timeout: .seconds(10))
            try await Task.sleep(for: .seconds(5))
            _ = try await daemon.status()
            guard let pid = daemon.pid else { throw HarnessError("\(binary) is not running") }
            let status = ProcFS.statusFields("/proc/\(pid)/status")
            let rollup = ProcFS.statusFields("/proc/\(pid)/smaps_rollup")
            guard let peak = status["VmHWM"], let resident = status["VmRSS"], let proportional = rollup["Pss"] else {
                throw HarnessError("no VmHWM, VmRSS or Pss for \(binary) (pid \(pid))")
            }
            await daemon.stop()
            return Memory(peakKB: Int(peak), residentKB: Int(resident), proportionalKB: Int(proportional))
        } catch {
            await daemon.stop()
            throw error
        }
    }
}

struct HealthCostGate {
    let graph: PipeWireGraph
    let group: any EventLoopGroup
    let daemon: String
    /// The unchecked window, s, and the checks at 0.05 s apart (as long a window).
    static let seconds = 8.0
    static let checks = 160

    func run(budgetMs: Double) async throws -> Bool {
        let (soundscape, extra) = try SoundscapeChoice.resolve(file: Options().file, daemon: daemon, graph: graph)
        let bench = KeepAliveBench(
            graph: graph, daemonPath: daemon, soundscape: soundscape, extraArguments: extra, seconds: Self.seconds,
            fastChecks: Self.checks, rounds: 1, group: group, pwPlay: { nil })
        let (baseline, fast) = try await bench.perCheckCost()
        guard let perCheck = KeepAliveBench.perCheck(fast, baseline: baseline) else {
            throw HarnessError("no check was answered in the window")
        }
        let ms = perCheck * 1000
        print(
            String(
                format: "release soundscaped, playing, off its data thread: %.2f ms/s of CPU without a health check, "
                    + "%.2f ms/s with %d HTTP checks in %.1f s: %.3f ms per check (budget %g ms)",
                baseline.checkingCPUPerSecond * 1000, fast.checkingCPUPerSecond * 1000, fast.checks, fast.window.seconds, ms, budgetMs))
        guard fast.checks >= Self.checks / 8 else {
            log("error: only \(fast.checks) checks ran in the window")
            return false
        }
        guard ms <= budgetMs else {
            log(
                String(
                    format: "error: an HTTP health check costs %.3f ms of CPU, over the budget of %g ms "
                        + "(docs/performance.md, \"The keep-alive as a whole\")", ms, budgetMs))
            return false
        }
        return true
    }
}
