import ArgumentParser
import Foundation

/// A configuration value from a flag, else an environment variable, else a default; with where it
/// came from, so an error can say which one to fix.
public struct Setting: Sendable, Equatable {
    public var value: String
    /// `--pub`, `RIDE_BUS_PUB` or `default`.
    public var origin: String

    public init(value: String, origin: String) {
        self.value = value
        self.origin = origin
    }

    public static func resolve(
        _ flagValue: String?, flag: String, env: String, default defaultValue: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Setting {
        if let flagValue { return Setting(value: flagValue, origin: "--\(flag)") }
        if let envValue = environment[env], !envValue.isEmpty { return Setting(value: envValue, origin: env) }
        return Setting(value: defaultValue, origin: "default")
    }

    /// As `resolve`, for a secret: after the flag and `env`, the file `<env>_FILE` names (Docker's
    /// and Kubernetes' convention for secrets mounted as files; one trailing newline dropped). A
    /// file that cannot be read, or is empty, is a `ConfigurationError` naming the variable.
    public static func resolveSecret(
        _ flagValue: String?, flag: String, env: String, default defaultValue: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Setting {
        let direct = resolve(flagValue, flag: flag, env: env, default: defaultValue, environment: environment)
        guard direct.origin == "default", let path = environment[env + "_FILE"], !path.isEmpty else { return direct }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("\(env)_FILE: cannot read \(path) (a secret mounted as a file?)")
        }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\r\n") { text.removeLast(2) } else if text.hasSuffix("\n") { text.removeLast() }
        guard !text.isEmpty else { throw ConfigurationError("\(env)_FILE: \(path) is empty") }
        return Setting(value: text, origin: "\(env)_FILE")
    }
}

/// Help text for an option that also reads an environment variable.
public func helpWithEnv(_ text: String, env: String, default defaultValue: String? = nil) -> ArgumentHelp {
    var help = "\(text) [env: \(env)"
    if let defaultValue { help += ", default: \(defaultValue)" }
    return ArgumentHelp(stringLiteral: help + "]")
}

/// A configuration value that cannot be used; the message names the flag or variable and the fix.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads an on/off setting: the flag, else its variable (1, true or yes; 0, false, no or empty).
public func flagSetting(_ flagValue: Bool, flag: String, env: String, environment: [String: String] = ProcessInfo.processInfo.environment)
    throws -> Bool
{
    if flagValue { return true }
    let value = environment[env] ?? ""
    switch value.lowercased() {
    case "1", "true", "yes": return true
    case "", "0", "false", "no": return false
    default: throw ConfigurationError("\(env) '\(value)' must be 1 or 0 (the variable of --\(flag))")
    }
}

/// Reads an integer setting, with a range check whose error names the setting.
public func integerSetting(
    _ flagValue: Int?, flag: String, env: String, default defaultValue: Int, range: ClosedRange<Int>,
    environment: [String: String] = ProcessInfo.processInfo.environment
) throws -> Int {
    let setting = Setting.resolve(flagValue.map(String.init), flag: flag, env: env, default: String(defaultValue), environment: environment)
    guard let value = Int(setting.value) else {
        throw ConfigurationError("\(flag) (\(setting.origin)) '\(setting.value)' is not a whole number")
    }
    guard range.contains(value) else {
        throw ConfigurationError("\(flag) (\(setting.origin)) \(value) is out of range \(range.lowerBound)...\(range.upperBound)")
    }
    return value
}
