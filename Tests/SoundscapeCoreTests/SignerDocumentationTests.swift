import Foundation
import SoundscapeCore
import Testing

/// What the docs say of the signer's timing is what the machine does: docs/signer.md's
/// restart delays (a signer that keeps failing at once, the default settings) are the
/// machine's, one for one; and every page that describes `signer-health-interval`
/// says it runs from the start of one check to the start of the next, as SignerHealth
/// does (SignerHealthTests) and `soundscaped --help` says.
@Suite struct SignerDocumentationTests {
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
        driver.send(.session(true))
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
        driver.send(.session(true))
        let first = driver.spawnAndCrash(pid: 100)
        let restartAt = try #require(first.ticks.first)
        #expect(restartAt - driver.now == .seconds(1))
        driver.send(.resetFailure, after: .milliseconds(200))
        #expect(driver.send(.tick, at: restartAt) == [.spawn])
        let second = driver.spawnAndCrash(pid: 101)
        let delay = try #require(second.ticks.first) - driver.now
        #expect(delay == .seconds(2), "a play while it waited started the backoff again")
        #expect(driver.status.restarts == 2)
    }

    /// Each page's description of `signer-health-interval`: from its marker to the next blank
    /// line (a paragraph, a table row, a man page's list item), white space made single.
    @Test(arguments: [
        ("docs/signer.md", "`signer-health-command` is run every `signer-health-interval`"),
        ("docs/configuration.md", "| `signer-health-interval` |"),
        ("packaging/man/soundscaped.conf.5", ".It Cm signer-health-interval"),
    ])
    func theHealthIntervalRunsFromStartToStart(page: String, marker: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
        let start = try #require(text.range(of: marker), "\(page) no longer describes signer-health-interval")
        let rest = text[start.lowerBound...]
        let end = [rest.range(of: "\n\n"), rest.range(of: "\n|"), rest.range(of: "\n.It ")].compactMap { $0?.lowerBound }.min()
        let description = rest[..<(end ?? rest.endIndex)].split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        #expect(
            description.contains("from the start of one") && description.contains("to the start of the next"),
            "\(page) does not say the interval runs from the start of one check to the start of the next: \(description)")
    }
}
