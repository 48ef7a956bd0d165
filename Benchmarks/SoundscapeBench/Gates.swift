import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import TestSupport

/// CI's budgets, as modes of the bench (`.ci/run` runs them through `scripts/bench`):
///
///     soundscape-bench memory [--layers] [--compare] [--fresh] [--daemon PATH] [BUDGET_KB]   (default 16384)
///     soundscape-bench health-cost [--daemon PATH] [BUDGET_MS]                    (default 1)
///
/// Each starts a private PipeWire graph with a null sink, runs the release daemon in it
/// (`--daemon`, default the soundscaped beside this executable), prints what it measured
/// with the budget, and exits 1 when the figure is over it (64 on a usage error, 70 when
/// the measurement itself failed).
///
/// memory: the daemon plays the default soundscape from a fresh state and cache, five
/// seconds of steady playback (refills, the PCM cache's first build, a status query);
/// its peak RSS (VmHWM, its whole life, startup included) must be within the budget.
/// RSS and PSS (shared pages divided among their users) are printed beside it.
/// --layers plays the layers bench's three-layer mix instead (LayersBench.mix), its first
/// play: three loops decoded and their PCM cache files built at once, measured once all
/// three are built; issue 39 holds three layers under 16 MiB too.
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
struct MemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "CI's memory budget: the release daemon's peak RSS while it plays.",
        discussion: "Exits 1 over the budget, 70 when the measurement failed (Gates.swift says what it measures).",
        helpNames: BenchArguments.helpNames)

    @Flag(help: "Play the layers bench's three-layer mix (its first play, three cache builds) instead of one soundscape.")
    var layers = false
    @Flag(help: "Also the same link without the code layout (BIN/layout/soundscaped-unordered): what the layout saves.")
    var compare = false
    @Flag(help: "Also the link with a layout from a fresh profile (BIN/layout/fresh/soundscaped): what the committed profile costs.")
    var fresh = false
    @OptionGroup var daemon: DaemonOption
    @Argument(help: ArgumentHelp("The budget, kB.", valueName: "budget-kb")) var budget = 16384.0

    func validate() throws { try Gate.requireBudget(budget) }

    func run() async throws {
        let (daemon, budget, compare, fresh, layers) = (self.daemon.path, self.budget, self.compare, self.fresh, self.layers)
        throw ExitCode(
            await Gate.run { graph, group in
                try await MemoryGate(graph: graph, group: group, daemon: daemon, layers: layers)
                    .run(budgetKB: Int(budget), compare: compare, fresh: fresh)
            })
    }
}

struct HealthCostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health-cost",
        abstract: "CI's health-check budget: the built-in HTTP health check's CPU per check.",
        discussion: "Exits 1 over the budget, 70 when the measurement failed (Gates.swift says what it measures).",
        helpNames: BenchArguments.helpNames)

    @OptionGroup var daemon: DaemonOption
    @Argument(help: ArgumentHelp("The budget, ms.", valueName: "budget-ms")) var budget = 1.0

    func validate() throws { try Gate.requireBudget(budget) }

    func run() async throws {
        let (daemon, budget) = (self.daemon.path, self.budget)
        throw ExitCode(
            await Gate.run { graph, group in
                try await HealthCostGate(graph: graph, group: group, daemon: daemon).run(budgetMs: budget)
            })
    }
}

enum Gate {
    static func requireBudget(_ budget: Double) throws {
        guard budget.isFinite, budget > 0 else { throw ValidationError("the budget must be a number > 0, not \(budget)") }
    }

    /// A gate, run off the main actor like the other measuring modes, on a private graph of its
    /// own: 0 within the budget; 1 over it, or when the daemon logged an error; 70 when the
    /// measurement failed.
    static func run(_ measure: @escaping @Sendable (PipeWireGraph, any EventLoopGroup) async throws -> Bool) async -> Int32 {
        await Task.detached {
            let signals = Bench.installSignalHandlers()
            defer { signals.forEach { $0.cancel() } }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let status = await outcome(group: group, measure)
            try? await group.shutdownGracefully()
            return status
        }.value
    }

    private static func outcome(group: any EventLoopGroup, _ measure: (PipeWireGraph, any EventLoopGroup) async throws -> Bool) async -> Int32 {
        guard let graph = Bench.startGraph() else { return 70 }
        defer { Cleanup.shared.run() }
        do {
            let passed = try await measure(graph, group)
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
    /// The three-layer mix's first play instead of the default soundscape.
    let layers: Bool

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
            "release soundscaped, playing \(layers ? "three layers" : "one soundscape"): peak RSS \(ordered.peakKB) kB (budget \(budgetKB) kB), RSS \(ordered.residentKB) kB, PSS \(ordered.proportionalKB) kB"
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
            try await daemon.call("Play", layers ? LayersBench.mixParameters : [:])
            try await daemon.waitForState("playing", timeout: .seconds(10))
            try await Task.sleep(for: .seconds(5))
            if layers { try LayersBench.waitForMixCached(in: state.appendingPathComponent("cache").path) }
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
