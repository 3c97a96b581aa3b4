import ArgumentParser
import Foundation

/// One setting, declared once: its flag, its environment variable, its default and what it means.
/// The `@Option`'s name and help come from it, and so does the value, so the default the help
/// shows is the default used and an error names the flag and the variable the help names.
public struct SettingKey: Sendable {
    public let flag: String
    public let env: String
    /// The default value; nil when there is none.
    public let defaultText: String?
    /// What the help says of an unset setting: the default, or what being unset means (`off`).
    public let unsetText: String?
    public let abstract: String

    public init(_ flag: String, env: String, default defaultText: String? = nil, _ abstract: String) {
        (self.flag, self.env, self.defaultText, self.unsetText, self.abstract) = (flag, env, defaultText, defaultText, abstract)
    }

    /// A setting without a default value whose help says what unset means (`unset: "off"`).
    public init(_ flag: String, env: String, unset: String, _ abstract: String) {
        (self.flag, self.env, self.defaultText, self.unsetText, self.abstract) = (flag, env, nil, unset, abstract)
    }

    public var name: NameSpecification { .customLong(flag) }
    public var help: ArgumentHelp { helpWithEnv(abstract, env: env, default: unsetText) }
    /// `--flag, VARIABLE`: how a summary or an error names the setting.
    public var flagAndVariable: String { "--\(flag), \(env)" }

    /// The flag's value, else the variable's, else the default (empty when there is none).
    public func resolve(_ flagValue: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> Setting {
        Setting.resolve(flagValue, flag: flag, env: env, default: defaultText ?? "", environment: environment)
    }

    /// The same, for a default known only at start-up (a path in the data directory, which the
    /// help shows as `<data-dir>/…`).
    public func resolve(
        _ flagValue: String?, default defaultValue: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Setting {
        Setting.resolve(flagValue, flag: flag, env: env, default: defaultValue, environment: environment)
    }

    /// As `resolve`, for a secret: after the flag and the variable, the file `<env>_FILE` names.
    public func resolveSecret(
        _ flagValue: String?, default defaultValue: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Setting {
        try Setting.resolveSecret(
            flagValue, flag: flag, env: env, default: defaultValue ?? defaultText ?? "", environment: environment)
    }
}

/// A whole-number setting and the range it must be in.
public struct IntegerSettingKey: Sendable {
    public let key: SettingKey
    public let defaultValue: Int
    public let range: ClosedRange<Int>

    public init(_ flag: String, env: String, default defaultValue: Int, range: ClosedRange<Int>, _ abstract: String) {
        self.key = SettingKey(flag, env: env, default: String(defaultValue), abstract)
        self.defaultValue = defaultValue
        self.range = range
    }

    public var name: NameSpecification { key.name }
    public var help: ArgumentHelp { key.help }

    /// The flag's value, else the variable's, else the default; one out of `range`, or not a whole
    /// number, is a `ConfigurationError` naming the setting and where it came from.
    public func value(_ flagValue: Int?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int {
        try integerSetting(flagValue, flag: key.flag, env: key.env, default: defaultValue, range: range, environment: environment)
    }
}

extension SettingKey {
    /// An on/off setting (a `@Flag`): on when the flag is given or the variable is 1, true or yes.
    public func isOn(_ flagValue: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Bool {
        try flagSetting(flagValue, flag: flag, env: env, environment: environment)
    }
}
