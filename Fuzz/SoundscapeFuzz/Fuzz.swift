// libFuzzer targets for every parser that takes bytes from outside the daemon.
// Built by scripts/fuzz with `-sanitize=fuzzer,address -D FUZZING`; the target is
// chosen by $SOUNDSCAPE_FUZZ_TARGET (one binary, one build, ten targets):
//   varlink-frames    the control socket's NUL framing, fed in chunks the fuzzer chooses
//   varlink-request   a call message: JSON (deep nesting included) and the call's shape
//   config            the config file, with its shell-word splitting
//   ogg-pages         the Ogg page walk that finds truncated soundscape files
//   manifest          a soundscape directory's manifest.json
//   signer-lines      the signer host's output, split into lines, in chunks
//   notify-message    a datagram on a signer's NOTIFY_SOCKET (sd_notify), and its status line
//   env-file          a signer-env-file (systemd's EnvironmentFile= syntax)
//   container-probe   a recording's first bytes, as `soundscapectl import` probes them
//   loop-plan         the import's trim and loop search, on an envelope made of the bytes
// Each checks properties, not only "no crash": a precondition failure is a finding.
// Every crash found becomes a regression test (Tests/*/FuzzRegressionTests.swift).
#if FUZZING
import Glibc
import NIOCore
import SoundscapeCore
@testable import SoundscapeAudio
@testable import SoundscapeDaemon
@testable import SoundscapeLibrary
@testable import Varlink

private let target: String = getenv("SOUNDSCAPE_FUZZ_TARGET").map { String(cString: $0) } ?? ""

/// libFuzzer's driver, called from our own entry point: SwiftPM names an executable's
/// entry point itself (and points `main` at it), so libFuzzer's `main` stays unused.
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@main
enum FuzzMain {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runDriver(&argc, &argv, fuzzOneInput))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    switch target {
    case "varlink-frames": FuzzTargets.varlinkFrames(bytes)
    case "varlink-request": FuzzTargets.varlinkRequest(bytes)
    case "config": FuzzTargets.config(bytes)
    case "ogg-pages": FuzzTargets.oggPages(bytes)
    case "manifest": FuzzTargets.manifest(bytes)
    case "signer-lines": FuzzTargets.signerLines(bytes)
    case "notify-message": FuzzTargets.notifyMessage(bytes)
    case "env-file": FuzzTargets.environmentFile(bytes)
    case "container-probe": ImportFuzzTargets.containerProbe(bytes)
    case "loop-plan": ImportFuzzTargets.loopPlan(bytes)
    default:
        let message = "set SOUNDSCAPE_FUZZ_TARGET to one of \(FuzzTargets.names.joined(separator: ", "))\n"
        _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        exit(2)
    }
    return 0
}
#else
@main
enum FuzzStub {
    static func main() {
        print("soundscape-fuzz is built for fuzzing by scripts/fuzz (-sanitize=fuzzer,address -D FUZZING)")
    }
}
#endif
