import Foundation
import SoundscapeCore
import Testing
import TestSupport

/// The event names the scripts look for come from the daemon, not from a copy:
/// `soundscaped --print-settings --json` declares every reason and type (the enums
/// the IDL's `Event` is made from), and scripts/events.py, through which the shell
/// checks, the soak and scripts/check-bunker.py name events, fails on one it lacks.
@Suite struct PrintedEventReasonsTests {
    static let events = ProductLocator.packageRoot.appendingPathComponent("scripts/events.py").path

    func environment() throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SOUNDSCAPED"] = try ProductLocator.soundscaped().path
        environment.removeValue(forKey: "SOUNDSCAPED_EVENT_REASONS")
        return environment
    }

    @Test func printSettingsDeclaresEveryEventReasonAndType() throws {
        let json = try ChildProcess.run([try ProductLocator.soundscaped().path, "--print-settings", "--json"])
            .requireSuccess().stdout
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let events = try #require(document["events"] as? [String: [String]])
        #expect(events["reasons"] == EventReason.allCases.map(\.rawValue))
        #expect(events["types"] == EventType.allCases.map(\.rawValue))
        #expect(events["causes"] == InterruptionCause.allCases.map(\.rawValue))
    }

    @Test func eventsPyKnowsTheDaemonsInterruptionCausesAndFailsOnAnyOther() throws {
        let environment = try environment()
        let listed = try ChildProcess.run(["python3", Self.events, "causes"], environment: environment).requireSuccess()
        #expect(Set(listed.stdout.split(separator: "\n").map(String.init)) == Set(InterruptionCause.allCases.map(\.rawValue)))
        let check = "import sys; sys.path.insert(0, sys.argv[1]); from events import Causes; print(Causes()(*sys.argv[2:]))"
        let scripts = URL(fileURLWithPath: Self.events).deletingLastPathComponent().path
        let known = try ChildProcess.run(["python3", "-c", check, scripts, "signerDown"], environment: environment)
        #expect(known.status == 0 && known.stdout == "signerDown\n", "\(known)")
        let renamed = try ChildProcess.run(["python3", "-c", check, scripts, "signerGone"], environment: environment)
        #expect(renamed.status == 2, "\(renamed)")
        #expect(renamed.stderr.contains("no interruption cause 'signerGone'"), "\(renamed.stderr)")
    }

    @Test func eventsPyKnowsTheDaemonsReasonsAndFailsOnAnyOther() throws {
        let environment = try environment()
        let known = try ChildProcess.run(["python3", Self.events, "known", "signerDown", "resumed"], environment: environment)
        #expect(known.status == 0, "\(known)")
        let renamed = try ChildProcess.run(["python3", Self.events, "known", "signerDown", "signerGone"], environment: environment)
        #expect(renamed.status == 2, "\(renamed)")
        #expect(renamed.stderr.contains("no event reason 'signerGone'"), "\(renamed.stderr)")
        let listed = try ChildProcess.run(["python3", Self.events, "reasons"], environment: environment).requireSuccess()
        #expect(Set(listed.stdout.split(separator: "\n").map(String.init)) == Set(EventReason.allCases.map(\.rawValue)))
    }

    @Test func eventsPyAfterMatchesReasonAndValuesAndRefusesAnUnknownReason() throws {
        let environment = try environment()
        let lines = #"{"reason":"volumeChanged","volume":40}\n{"reason":"signerDown","message":"unhealthy"}\n"#
        func after(_ arguments: String) throws -> ProcessResult {
            try ChildProcess.run(
                ["sh", "-c", "printf '\(lines)' | python3 \(Self.events) after \(arguments)"], environment: environment)
        }
        #expect(try after("signerDown message=unhealthy").status == 0)
        #expect(try after("volumeChanged volume=40").status == 0)
        #expect(try after("volumeChanged volume=41").status == 1)
        #expect(try after("signerRestored").status == 1)
        #expect(try after("signerGone").status == 2)
    }
}
