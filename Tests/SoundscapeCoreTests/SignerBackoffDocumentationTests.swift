import Foundation
import SoundscapeCore
import Testing

/// docs/signer.md states the restart delays of a signer that keeps failing at once,
/// with the default settings; they are the machine's, one for one.
@Suite struct SignerBackoffDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// "the restarts wait 1 s, 2 s, 4 s …" in docs/signer.md, in seconds.
    static func documentedDelays() throws -> [Int64] {
        let page = try String(contentsOf: root.appendingPathComponent("docs/signer.md"), encoding: .utf8)
        let text = page.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let start = try #require(text.range(of: "the restarts wait "), "docs/signer.md no longer says what the restarts wait")
        var delays: [Int64] = []
        for item in text[start.upperBound...].split(separator: ",") {
            let words = item.split(separator: " ")
            guard words.count == 2, words[1] == "s", let seconds = Int64(words[0]) else { break }
            delays.append(seconds)
        }
        return delays
    }

    /// The delay of each `signerRestarting` a signer that exits 0.1 s after every start gets.
    static func machineDelays(count: Int) throws -> [Duration] {
        var driver = SignerDriver(SignerDriver.configuration(crashLoopLimit: 0))
        driver.send(.setWanted(true))
        var delays: [Duration] = []
        for index in 0..<count {
            let actions = driver.spawnAndCrash(pid: Int32(100 + index))
            #expect(actions.reasons == [.signerExited, .signerRestarting], "failure \(index + 1): \(actions)")
            let restartAt = try #require(actions.ticks.first, "failure \(index + 1) schedules no restart")
            delays.append(restartAt - driver.now)
            #expect(driver.send(.tick, at: restartAt) == [.spawn], "failure \(index + 1)")
        }
        return delays
    }

    @Test func theDocumentedDelaysAreTheMachines() throws {
        let documented = try Self.documentedDelays()
        #expect(documented.count >= 6, "docs/signer.md lists too few delays: \(documented)")
        #expect(try Self.machineDelays(count: documented.count) == documented.map { Duration.seconds($0) })
        #expect(SignerMachine.Configuration().backoffInitial == .seconds(documented[0]))
        #expect(SignerMachine.Configuration().backoffMaximum == .seconds(documented.last!))
    }

    /// `soundscapectl play` (Player.play) sends `.resetFailure` on every press, meant as a
    /// fresh chance for a signer that gave up. While one only waits to restart, the machine
    /// starts a new session too, so its backoff and crash count begin again: a user's log
    /// read "restarting in 1 s", "1 s", "2 s", "4 s", "8 s". docs/signer.md says a play
    /// restarts the doubling only after the signer failed.
    @Test func aPlayWhileTheSignerWaitsKeepsItsBackoff() throws {
        var driver = SignerDriver(SignerDriver.configuration(crashLoopLimit: 0))
        driver.send(.setWanted(true))
        let first = driver.spawnAndCrash(pid: 100)
        let restartAt = try #require(first.ticks.first)
        #expect(restartAt - driver.now == .seconds(1))
        driver.send(.resetFailure, after: .milliseconds(200))
        #expect(driver.send(.tick, at: restartAt) == [.spawn])
        let second = driver.spawnAndCrash(pid: 101)
        let delay = try #require(second.ticks.first) - driver.now
        withKnownIssue("SignerMachine.handle(.resetFailure) calls startSession() in any phase, not only .failed") {
            #expect(delay == .seconds(2), "a play while it waited started the backoff again")
            #expect(driver.status.restarts == 2)
        }
    }
}
