import CPipeWire
import CSoundscapeShims

/// `pw_init` must run once per process before any other call.
enum PipeWireLibrary {
    static let initialised: Void = pw_init(nil, nil)
}

/// Builds a `pw_properties` from Swift strings; ownership passes to PipeWire
/// (`pw_stream_new`, `pw_context_connect` take it).
func makeProperties(_ values: [String: String]) -> UnsafeMutablePointer<pw_properties> {
    let properties = scs_properties_new()!
    for (key, value) in values.sorted(by: { $0.key < $1.key }) {
        pw_properties_set(properties, key, value)
    }
    return properties
}

/// Reads one key of a `spa_dict` (registry globals carry their properties this way).
func lookup(_ dictionary: UnsafePointer<spa_dict>?, _ key: String) -> String? {
    guard let dictionary, let value = spa_dict_lookup(dictionary, key) else { return nil }
    return String(cString: value)
}

/// Copies a whole `spa_dict` into Swift, for the graph monitor's facts.
func properties(of dictionary: UnsafePointer<spa_dict>?) -> [String: String] {
    guard let dictionary else { return [:] }
    var result: [String: String] = [:]
    let count = Int(dictionary.pointee.n_items)
    for index in 0..<count {
        let item = dictionary.pointee.items[index]
        if let key = item.key, let value = item.value {
            result[String(cString: key)] = String(cString: value)
        }
    }
    return result
}

/// Runs `body` on the thread of `loop`, serialised with whatever else runs
/// there (for the data loop: between two `process` calls), and waits for it.
///
/// `body` is escaping in its type only: it has run when this returns. Not
/// `withoutActuallyEscaping`: in an optimised build the compiler passes its
/// check the length of this file's absolute path, so every caller's code would
/// differ with the checkout's path (docs/releasing.md). The closure's context
/// is allocated either way.
func runBlocking(on loop: UnsafeMutablePointer<pw_loop>, _ body: @escaping () -> Void) {
    var closure = body
    withUnsafeMutablePointer(to: &closure) { pointer in
        _ = scs_loop_invoke(
            loop,
            { _, _, _, _, _, userData in
                userData!.assumingMemoryBound(to: (() -> Void).self).pointee()
                return 0
            }, 0, nil, 0, true, pointer)
    }
}
