import Testing
import SoundscapeCore

/// The `sd_notify` datagram parser (`SignerNotification`), its merge, the status
/// line's cleaning and the sleep detector: the pure parts behind the notify socket.
@Suite struct SignerNotificationTests {
    static func parse(_ text: String) -> SignerNotification? {
        SignerNotification(parsing: Array(text.utf8))
    }

    @Test func readsWhatSystemdReads() throws {
        let message = try #require(Self.parse("READY=1\nSTATUS=igloo: 3/3 relays\nMAINPID=42\nWATCHDOG=1\nERRNO=110"))
        #expect(message.ready)
        #expect(!message.stopping)
        #expect(message.status == "igloo: 3/3 relays")
        #expect(message.watchdog)
        #expect(!message.watchdogTrigger)
        #expect(message.errno == 110)
    }

    @Test func ignoresWhatItDoesNotActOn() throws {
        for text in [
            "", "\n\n", "MAINPID=42", "BARRIER=1", "FDSTORE=1\nFDNAME=x", "RELOADING=1\nMONOTONIC_USEC=5",
            "READY=0", "READY=yes", "READY", "WATCHDOG=0", "ERRNO=-1", "ERRNO=abc", "ERRNO=99999", "ERRNO=",
            "=1", "ready=1", "STATUS",
        ] {
            let message = try #require(Self.parse(text), "\(text)")
            #expect(message.isEmpty, "\(text)")
        }
    }

    @Test func theLastOfReadyAndStoppingWins() throws {
        let stopped = try #require(Self.parse("READY=1\nSTOPPING=1"))
        #expect(!stopped.ready && stopped.stopping)
        let ready = try #require(Self.parse("STOPPING=1\nREADY=1"))
        #expect(ready.ready && !ready.stopping)
    }

    @Test func theLastStatusAndErrnoWin() throws {
        let message = try #require(Self.parse("STATUS=one\nERRNO=5\nSTATUS=two\nERRNO=7"))
        #expect(message.status == "two")
        #expect(message.errno == 7)
        // An empty STATUS= is still a status (cleaning it leaves nothing, so the old line stays).
        #expect(Self.parse("STATUS=")?.status == "")
    }

    @Test func watchdogTriggerIsAHang() throws {
        let message = try #require(Self.parse("WATCHDOG=trigger"))
        #expect(message.watchdogTrigger && !message.watchdog)
    }

    @Test func refusesNULsAndOversizedDatagramsWhole() {
        #expect(SignerNotification(parsing: Array("READY=1\0STATUS=x".utf8)) == nil)
        #expect(SignerNotification(parsing: [UInt8](repeating: 0x41, count: SignerNotification.maximumBytes)) != nil)
        #expect(SignerNotification(parsing: Array("READY=1\n".utf8) + [UInt8](repeating: 0x41, count: SignerNotification.maximumBytes)) == nil)
    }

    @Test func aStatusThatIsNotUTF8IsIgnoredAsSystemdDoes() throws {
        let message = try #require(SignerNotification(parsing: Array("READY=1\nSTATUS=".utf8) + [0xFF, 0xFE]))
        #expect(message.ready)
        #expect(message.status == nil)
    }

    /// Merging datagrams means the same as parsing them one after the other into one.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func mergingIsHandlingInOrder(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let fields = [
            "READY=1", "STOPPING=1", "WATCHDOG=1", "WATCHDOG=trigger", "STATUS=a", "STATUS=b", "ERRNO=3",
            "ERRNO=4", "MAINPID=9",
        ]
        for _ in 0..<500 {
            let datagrams = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                (0..<Int.random(in: 0...3, using: &generator)).map { _ in fields.randomElement(using: &generator)! }
            }
            var merged = SignerNotification()
            for datagram in datagrams { merged.merge(try #require(Self.parse(datagram.joined(separator: "\n")))) }
            let whole = try #require(Self.parse(datagrams.flatMap { $0 }.joined(separator: "\n")))
            #expect(merged == whole, "\(datagrams)")
        }
    }

    // MARK: The status line

    @Test func statusLinesLoseControlCharactersAndAreCapped() {
        #expect(SignerStatus.line("  3/3 relays \n") == "3/3 relays")
        #expect(SignerStatus.line("a\u{1B}[31mred\u{7}\tb") == "a[31mredb")
        #expect(SignerStatus.line("\u{0}\n\r\t ") == nil)
        #expect(SignerStatus.line("") == nil)
        let long = String(repeating: "é", count: 300)
        #expect(SignerStatus.line(long) == String(repeating: "é", count: SignerStatus.maximumStatusLength))
        #expect(SignerStatus.line("igloo-signer: 3/3 relays ✓") == "igloo-signer: 3/3 relays ✓")
    }

    // MARK: Sleep

    @Test func aSleepIsBoottimeGainingOnMonotonic() {
        var detector = SleepDetector(threshold: .seconds(1))
        #expect(detector.observe(.init(boot: .seconds(100), monotonic: .seconds(90))) == nil, "the first reading")
        // Time passing, and a wall-clock change, move both alike.
        #expect(detector.observe(.init(boot: .seconds(160), monotonic: .seconds(150))) == nil)
        #expect(detector.observe(.init(boot: .milliseconds(160_900), monotonic: .seconds(150))) == nil, "noise under the threshold")
        // An hour asleep.
        #expect(detector.observe(.init(boot: .seconds(3_800), monotonic: .seconds(180))) == .milliseconds(3_609_100))
        #expect(detector.observe(.init(boot: .seconds(3_801), monotonic: .seconds(181))) == nil)
    }
}
