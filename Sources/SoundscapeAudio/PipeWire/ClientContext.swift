import CPipeWire
import Logging

/// Makes our PipeWire context with only the modules a playback client uses.
///
/// Why: `client-rt.conf` (and newer releases' `client.conf`) also loads
/// module-client-device and module-session-manager, which export devices and
/// speak the session/endpoint interfaces; we do neither, and the two cost
/// about 0.3 MB of resident code and data for as long as we run. A module
/// cannot be unloaded once the context has it (its protocol marshals stay
/// registered), so we build the context from the `null` configuration and
/// load the five we need, with the SPA libraries and the silent log level that
/// client-rt.conf sets. The data loop is restarted after module-rt is in, so
/// its thread is created through module-rt and runs at realtime priority.
///
/// What this gives up: the user's `client-rt.conf` (drop-ins included). Where
/// anything here fails, the caller falls back to that file.
enum ClientContext {
    static let modules: [(name: String, required: Bool)] = [
        ("libpipewire-module-rt", false),
        ("libpipewire-module-protocol-native", true),
        ("libpipewire-module-client-node", true),
        ("libpipewire-module-adapter", true),
        ("libpipewire-module-metadata", true),
    ]
    static let spaLibraries = [
        ("audio.convert.*", "audioconvert/libspa-audioconvert"),
        ("support.*", "support/libspa-support"),
    ]

    /// The trimmed context, or nil (nothing left behind) when this PipeWire
    /// cannot make one.
    static func make(loop: UnsafeMutablePointer<pw_loop>, logger: Logger) -> OpaquePointer? {
        guard let context = pw_context_new(loop, makeProperties([PW_KEY_CONFIG_NAME: "null", "log.level": "0"]), 0) else {
            return nil
        }
        for (pattern, library) in spaLibraries where pw_context_add_spa_lib(context, pattern, library) < 0 {
            logger.debug("cannot map a SPA library; using client-rt.conf", metadata: ["library": "\(library)"])
            pw_context_destroy(context)
            return nil
        }
        for module in modules where pw_context_load_module(context, module.name, nil, nil) == nil {
            guard module.required else { continue }
            logger.debug("cannot load a PipeWire module; using client-rt.conf", metadata: ["module": "\(module.name)"])
            pw_context_destroy(context)
            return nil
        }
        if let data = pw_context_get_data_loop(context) {
            _ = pw_data_loop_stop(data)
            _ = pw_data_loop_start(data)
        }
        return context
    }
}
