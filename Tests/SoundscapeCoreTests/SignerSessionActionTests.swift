import SoundscapeCore
import Testing

/// `PlayerMachine` says when the user's keep-alive session starts and ends
/// (`.signerSession`), once per change: what the signer's machine takes as `.session`,
/// so the player performs an action instead of reading the machine (issue 36).
@Suite struct SignerSessionActionTests {
    typealias D = MachineDriver

    static func sessions(_ actions: [PlayerMachine.Action]) -> [Bool] {
        actions.compactMap { if case .signerSession(let wanted) = $0 { wanted } else { nil } }
    }

    @Test func playPauseAndStopSayTheSessionOncePerChange() {
        var driver = D()
        driver.showsSession = true
        driver.send(.outputConnected)
        #expect(Self.sessions(driver.send(.play(D.rain))) == [true])
        #expect(Self.sessions(driver.send(.play(D.ocean))) == [], "a switch is the same session")
        #expect(Self.sessions(driver.send(.pause)) == [], "a pause keeps the session and its signer")
        #expect(Self.sessions(driver.send(.stop)) == [false])
        #expect(Self.sessions(driver.send(.stop)) == [])
    }

    @Test func aRestoredSessionIsSaidWithTheFirstInput() {
        var driver = D(wantsPlaying: true)
        driver.showsSession = true
        #expect(Self.sessions(driver.send(.tick)) == [true])
        #expect(Self.sessions(driver.send(.tick)) == [])
    }

    @Test func aDecodeFailureWithoutFallbackEndsTheSession() {
        var driver = D()
        driver.showsSession = true
        driver.send(.outputConnected)
        #expect(Self.sessions(driver.send(.play(D.rain))) == [true])
        #expect(Self.sessions(driver.send(.decodeFailed(D.rain, message: "damaged", fallback: nil))) == [false])
    }
}
