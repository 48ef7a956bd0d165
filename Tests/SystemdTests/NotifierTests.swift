import Glibc
import Logging
import Testing
@testable import SoundscapeDaemon

/// The datagrams the notifier sends, byte for byte, to both kinds of address.
@Suite struct NotifierTests {
    private let logs = LogRecorder()

    @Test(arguments: [DatagramSink.Kind.path, .abstract])
    func sendsExactDatagrams(_ kind: DatagramSink.Kind) throws {
        let sink = try DatagramSink(kind)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": sink.address], logger: logs.logger)
        #expect(notifier.isEnabled)
        #expect(notifier.ready(status: "Playing ocean-waves at 50%") == .sent)
        #expect(notifier.status("PipeWire not available; retrying") == .sent)
        #expect(notifier.watchdog() == .sent)
        #expect(notifier.stopping() == .sent)
        #expect(notifier.send(["STATUS=a", "ERRNO=0"]) == .sent)
        #expect(
            sink.messages() == [
                "READY=1\nSTATUS=Playing ocean-waves at 50%",
                "STATUS=PipeWire not available; retrying",
                "WATCHDOG=1",
                "STOPPING=1",
                "STATUS=a\nERRNO=0",
            ])
    }

    @Test func lineBreaksCannotForgeFields() throws {
        let sink = try DatagramSink(.path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": sink.address], logger: logs.logger)
        notifier.status("evil\nREADY=1\r\nMAINPID=1\0x")
        #expect(sink.messages() == ["STATUS=evil READY=1 MAINPID=1 x"])
    }

    @Test func withoutNotifySocketNothingIsSent() {
        for environment in [[:], ["NOTIFY_SOCKET": ""]] {
            let notifier = SystemdNotifier(environment: environment, logger: logs.logger)
            #expect(!notifier.isEnabled)
            #expect(notifier.ready(status: "x") == .notUnderSystemd)
            #expect(notifier.watchdog() == .notUnderSystemd)
        }
        #expect(logs.messages().isEmpty)
    }

    @Test(arguments: ["relative/path", "vsock:2:1234", "@", "/", "/" + String(repeating: "x", count: 200)])
    func unsupportedAddressesFailWithoutThrowing(_ value: String) {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": value], logger: logs.logger)
        #expect(!notifier.isEnabled)
        #expect(notifier.ready(status: "x") == .failed(.unsupportedAddress(value)))
        #expect(logs.messages(atLeast: .warning).count == 1)
    }

    @Test func sendFailuresAreReturnedAndLoggedOnce() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"], logger: logs.logger)
        #expect(notifier.isEnabled)
        #expect(notifier.watchdog() == .failed(.sendFailed(errno: ENOENT)))
        #expect(notifier.watchdog() == .failed(.sendFailed(errno: ENOENT)))
        #expect(logs.messages(atLeast: .warning).count == 1)
        #expect(logs.messages().count == 2)
    }

    @Test func oversizedMessagesAreRefused() throws {
        let sink = try DatagramSink(.path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": sink.address], logger: logs.logger)
        let text = String(repeating: "x", count: SystemdNotifier.maximumMessageBytes)
        #expect(notifier.status(text) == .failed(.messageTooLong(bytes: text.utf8.count + 7)))
        #expect(sink.messages().isEmpty)
    }

    @Test func longStatusIsCutAtACharacterBoundary() {
        let text = String(repeating: "é", count: 2000)
        let bounded = SystemdNotifierService.bounded(text)
        #expect(bounded.utf8.count <= SystemdNotifierService.maximumStatusBytes)
        #expect(bounded.hasSuffix("é…"))
        #expect(SystemdNotifierService.bounded("short") == "short")
    }
}
