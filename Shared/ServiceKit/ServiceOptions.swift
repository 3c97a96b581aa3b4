import ArgumentParser
import Foundation
import SettingsKit

/// `--concurrency` of a service that serves ops.
public struct WorkerOptions: ParsableArguments {
    @Option(
        name: .customLong("concurrency"),
        help: helpWithEnv(
            "Requests served at once (MDP worker connections)", env: "RIDE_WORKER_CONCURRENCY", default: "\(defaultWorkerConcurrency)"))
    var concurrency: Int?

    public init() {}

    /// How many requests its worker serves at once.
    public func resolved() throws -> Int { try concurrencySetting(concurrency) }
}

/// What a service keeps in its data directory, for `--data-dir`'s help.
public protocol DataFiles {
    /// E.g. "trips.sqlite (unless --database-url)".
    static var description: String { get }
}

/// `--data-dir` of a service that keeps files (its SQLite databases, keys, logs).
public struct DataDirectoryOptions<Files: DataFiles>: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: helpWithEnv("Directory of \(Files.description)", env: "RIDE_DATA_DIR", default: "./.data"))
    var dataDirectory: String?

    public init() {}

    /// The directory.
    public func resolved() -> String { Setting.resolve(dataDirectory, flag: "data-dir", env: "RIDE_DATA_DIR", default: "./.data").value }
}

extension ExitCodes {
    /// The exit-codes paragraph of a service's `--help`; `opening` names what it opens at start
    /// (`the database`) when failing to is an exit of its own.
    public static func help(opening: String? = nil) -> String {
        "Exit codes: 0 after a clean shutdown (SIGINT/SIGTERM), \(usage) for a malformed flag or variable, \(unavailable) when an address cannot be bound"
            + (opening.map { ", \(software) when \($0) cannot be opened." } ?? ".")
    }
}
