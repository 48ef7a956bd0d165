/// One setting of the daemon, declared once in `Settings` (its key, flag, value
/// type and parser, default, when a change takes effect, and what it means), from
/// which the config file, the command line, their merge, a reload's list of
/// changes, `soundscaped --help` and `--print-settings` are all made.
///
/// A setting with `inFile` is a key of soundscaped.conf and a flag of the same
/// name; one without is a flag only (where things are: the socket, the state).
public struct Setting<Value: Sendable & Equatable>: Sendable {
    /// The key in the file and, with `--` before it, the flag.
    public let key: String
    public let inFile: Bool
    /// What the flag's value is called in `--help` (`seconds`, `count`, `PATH`).
    public let valueName: String
    /// One line: what it is for.
    public let help: String
    public let effect: SettingEffect
    /// The value a setting takes when neither the file nor a flag sets it.
    public let defaultValue: Value
    /// The default in words when it is found at start, from the environment (a path under
    /// `$XDG_CACHE_HOME`), not a value of its own: nil for a default the value says.
    let defaultWords: String?
    /// `--signer-keep-running`: a flag with no value, meaning true.
    public let isSwitch: Bool
    /// Not in `--help` (measurement aids).
    public let isHidden: Bool
    /// One occurrence parsed (`name` is how errors call it: `key` or `--key`).
    let parseOne: @Sendable (_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> Value
    /// For repeatable settings: a later occurrence added to what came before (nil: once only).
    let accumulate: (@Sendable (_ earlier: Value, _ later: Value) -> Value)?
    /// The value in words, for a reload's message and `--print-settings`.
    let format: @Sendable (Value) -> String

    public init(
        _ key: String, inFile: Bool = true, valueName: String, default defaultValue: Value, defaultWords: String? = nil,
        effect: SettingEffect, isSwitch: Bool = false, isHidden: Bool = false, help: String,
        parse: @escaping @Sendable (String, String, SettingContext) throws(SettingError) -> Value,
        accumulate: (@Sendable (Value, Value) -> Value)? = nil,
        format: @escaping @Sendable (Value) -> String
    ) {
        self.key = key
        self.inFile = inFile
        self.valueName = valueName
        self.help = help
        self.effect = effect
        self.defaultValue = defaultValue
        self.defaultWords = defaultWords
        self.isSwitch = isSwitch
        self.isHidden = isHidden
        self.parseOne = parse
        self.accumulate = accumulate
        self.format = format
    }

    public var flag: String { "--" + key }

    /// How the default reads in the docs and `--help`; nil when it has no value (no signer,
    /// no extra directory), which the format writes as `SettingParsers.none`.
    public var defaultText: String? {
        if let defaultWords { return defaultWords }
        let text = format(defaultValue)
        return text == SettingParsers.none ? nil : text
    }
    public var isRepeatable: Bool { accumulate != nil }

    /// `text` parsed as this setting's value, errors naming it `name`.
    public func parse(_ text: String, name: String? = nil, context: SettingContext = SettingContext()) throws(SettingError) -> Value {
        try parseOne(text, name ?? key, context)
    }

    public func describe(_ value: Value) -> String { format(value) }
}

/// When a changed setting takes effect (`soundscapectl reload` says so for each).
public enum SettingEffect: String, Sendable, Equatable, CaseIterable {
    /// At once, on reload.
    case now
    /// When the signer host next starts; a running instance is not disturbed.
    case signerNextStart
    /// At the daemon's next start (the command line's places: socket, state).
    case daemonNextStart

    /// How a reload's message and the docs say it.
    public var words: String {
        switch self {
        case .now: "now"
        case .signerNextStart: "the signer's next start"
        case .daemonNextStart: "the next daemon start"
        }
    }
}

/// A value a setting refuses, in words; whoever parsed it adds the line or the flag.
public struct SettingError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    /// The command line itself is malformed (an unknown option, a missing value), as
    /// opposed to a value the setting refuses: a usage error, not a configuration one.
    public let isUsage: Bool

    public init(_ description: String, isUsage: Bool = false) {
        self.description = description
        self.isUsage = isUsage
    }
}

/// What parsing may ask of the system: the home directory for a leading `~`, and
/// checks of files, programs and the daemon's own credentials. Without them (the default) parsing stays pure:
/// `~` is refused and nothing on disk is looked at.
public struct SettingContext: Sendable {
    /// `$HOME`, which a leading `~` in a path or a command's word stands for.
    public var home: String?
    /// What is wrong with a file that holds a secret (nil: it is fine).
    public var checkSecretFile: (@Sendable (String) -> String?)?
    /// What is wrong with a command's program (not found, not executable; nil: fine).
    public var checkProgram: (@Sendable (_ program: String, _ workingDirectory: String?) -> String?)?
    /// Why the daemon's own credential of this name cannot be passed on (nil: it can).
    public var checkInheritedCredential: (@Sendable (_ name: String) -> String?)?
    /// What is wrong with a JSON text (nil: it is one JSON value); Core has no JSON parser.
    public var checkJSON: (@Sendable (String) -> String?)?

    public init(
        home: String? = nil, checkSecretFile: (@Sendable (String) -> String?)? = nil,
        checkProgram: (@Sendable (String, String?) -> String?)? = nil,
        checkInheritedCredential: (@Sendable (String) -> String?)? = nil,
        checkJSON: (@Sendable (String) -> String?)? = nil
    ) {
        self.home = home
        self.checkSecretFile = checkSecretFile
        self.checkProgram = checkProgram
        self.checkInheritedCredential = checkInheritedCredential
        self.checkJSON = checkJSON
    }
}

/// A setting with its value type forgotten, for the table's loops.
public protocol AnySetting: Sendable {
    var key: String { get }
    var flag: String { get }
    var inFile: Bool { get }
    var valueName: String { get }
    var help: String { get }
    var effect: SettingEffect { get }
    var defaultText: String? { get }
    var isSwitch: Bool { get }
    var isHidden: Bool { get }
    var isRepeatable: Bool { get }
    /// Parses one occurrence into `values` (after what is there, when repeatable).
    func take(_ text: String, name: String, context: SettingContext, into values: inout SettingValues) throws(SettingError)
    /// Whether `a` and `b` hold the same value for it.
    func same(_ a: SettingValues, _ b: SettingValues) -> Bool
    /// Its value in `values`, in words.
    func describe(in values: SettingValues) -> String
    /// The default, in words.
    var defaultDescription: String { get }
    /// The flags' value over the file's; repeatable settings take the file's, then the flags'.
    func merge(flags: SettingValues, file: SettingValues, into merged: inout SettingValues)
}

extension Setting: AnySetting {
    public func take(_ text: String, name: String, context: SettingContext, into values: inout SettingValues) throws(SettingError) {
        let value = try parseOne(text, name, context)
        if let accumulate, let earlier = values.explicit(self) {
            values.set(self, accumulate(earlier, value))
        } else {
            values.set(self, value)
        }
    }

    public func same(_ a: SettingValues, _ b: SettingValues) -> Bool { a[self] == b[self] }
    public func describe(in values: SettingValues) -> String { format(values[self]) }
    public var defaultDescription: String { format(defaultValue) }

    public func merge(flags: SettingValues, file: SettingValues, into merged: inout SettingValues) {
        switch (file.explicit(self), flags.explicit(self)) {
        case (nil, nil): break
        case (let value?, nil), (nil, let value?): merged.set(self, value)
        case (let fromFile?, let fromFlags?): merged.set(self, accumulate.map { $0(fromFile, fromFlags) } ?? fromFlags)
        }
    }
}

/// Values of settings, by key: what was set, with every other setting at its default.
public struct SettingValues: Sendable, Equatable, CustomStringConvertible {
    private var values: [String: any Sendable] = [:]
    /// Where each came from, for errors found after parsing (`line 3`, `--signer-command`).
    private var origins: [String: String] = [:]

    public init() {}

    public subscript<Value>(_ setting: Setting<Value>) -> Value {
        explicit(setting) ?? setting.defaultValue
    }

    /// The value set for `setting`, nil when it was not set.
    public func explicit<Value>(_ setting: Setting<Value>) -> Value? {
        // Unwrapped first: a missing entry cast to an optional `Value` would be `.some(nil)`.
        guard let stored = values[setting.key] else { return nil }
        return stored as? Value
    }

    public func isSet(_ setting: some AnySetting) -> Bool { values[setting.key] != nil }

    public mutating func set<Value>(_ setting: Setting<Value>, _ value: Value, origin: String? = nil) {
        values[setting.key] = value
        if let origin { origins[setting.key] = origin }
    }

    /// Where `setting` was set (`line 3`, `--signer-command`), if known.
    public func origin(of setting: some AnySetting) -> String? { origins[setting.key] }

    mutating func setOrigin(_ origin: String, of setting: some AnySetting) { origins[setting.key] = origin }

    /// The keys set, in the table's order.
    public var keysSet: [String] { Settings.all.filter { isSet($0) }.map(\.key) }

    public static func == (lhs: SettingValues, rhs: SettingValues) -> Bool {
        Settings.all.allSatisfy { $0.same(lhs, rhs) }
    }

    public var description: String {
        "[" + Settings.all.filter { isSet($0) }.map { "\($0.key): \($0.describe(in: self))" }.joined(separator: ", ") + "]"
    }
}
