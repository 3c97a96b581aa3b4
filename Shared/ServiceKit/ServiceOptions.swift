import ArgumentParser
import Foundation
import SettingsKit

/// `--concurrency` of a service that serves ops.
public struct WorkerOptions: ParsableArguments {
    typealias Keys = ServiceSettingKeys
    @Option(name: Keys.concurrency.name, help: Keys.concurrency.help) var concurrency: Int?

    public init() {}

    /// How many requests its worker serves at once.
    public func resolved() throws -> Int { try Keys.concurrency.value(concurrency) }
}

/// What a service keeps in its data directory, for `--data-dir`'s help.
public protocol DataFiles {
    /// E.g. "trips.sqlite (unless --database-url)".
    static var description: String { get }
}

/// `--data-dir` of a service that keeps files (its SQLite databases, keys, logs).
public struct DataDirectoryOptions<Files: DataFiles>: ParsableArguments {
    @Option(name: key.name, help: key.help) var dataDirectory: String?
    static var key: SettingKey { ServiceSettingKeys.dataDirectory(holding: "Directory of \(Files.description)") }

    public init() {}

    /// The directory.
    public func resolved() -> String { Self.key.resolve(dataDirectory).value }
}

extension ExitCodes {
    /// The exit-codes paragraph of a service's `--help`; `opening` names what it opens at start
    /// (`the database`) when failing to is an exit of its own.
    public static func help(opening: String? = nil) -> String {
        "Exit codes: 0 after a clean shutdown (SIGINT/SIGTERM), \(usage) for a malformed flag or variable, \(unavailable) when an address cannot be bound"
            + (opening.map { ", \(software) when \($0) cannot be opened." } ?? ".")
    }
}
