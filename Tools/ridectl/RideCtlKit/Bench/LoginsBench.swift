import ArgumentParser
import Bus
import Foundation
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit

/// `ridectl bench logins`: what one log-in costs `ride-users` — checking a password against its
/// stored PBKDF2-SHA256 hash (600 000 rounds, the service's default), the whole of a log-in's CPU
/// next to which the bus and the database are noise — through the real process: `users.login`
/// with a wrong password, one at a time and then several at once.
struct BenchLoginsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logins",
        abstract: "Log-ins per second ride-users checks (PBKDF2-SHA256, 600 000 rounds), one at a time and several at once.")

    @Option(help: "Seconds per measurement.") var seconds = 5.0
    @Option(help: "Log-ins in flight for the all-cores figure.") var inflight = ProcessInfo.processInfo.activeProcessorCount * 2
    @OptionGroup var bin: BinDirectoryOption
    @OptionGroup var format: BenchFormat

    mutating func validate() throws {
        guard seconds > 0, inflight >= 1 else { throw ValidationError("--seconds must be positive and --inflight at least 1") }
    }

    func run() async throws {
        let setup = "ride-users' PBKDF2-SHA256 (its default rounds), \(seconds) s per run"
        try await BenchPlatform.measure(bench: "logins", setup, bin: bin.path, json: format.json) { platform, table in
            try await platform.startService("ride-users")
            var options = MDPClient.Options()
            options.timeout = .seconds(60)
            options.attempts = 1
            let client = try await ServiceClient(broker: platform.broker, options: options, logger: CLILogging.logger)
            let phone = "+3584000\(Int.random(in: 10000...99999))"
            _ = try await client.call(
                Ops.Users.register, RegisterParams(role: .rider, name: "Bench Rider", phoneNumber: phone, password: "the right password"))
            let users = try requireProcess(platform.supervisor.pid(of: "ride-users"))
            for (measure, atOnce) in [("one at a time", 1), ("\(inflight) at once", inflight)] {
                let before = CPUTimes.now(["users": users])
                let (count, elapsed) = try await Self.logins(client, phone: phone, inflight: atOnce, seconds: seconds)
                let used = CPUTimes.now(["users": users]).since(before).processes["users"] ?? 0
                let rate = Double(count) / elapsed
                table.add(
                    "log-ins checked, \(measure)", Self.perSecond(rate), String(format: "reported (%.0f ms each)", 1000 / max(rate, 0.001)))
                table.add(
                    "  ride-users CPU, \(measure)", String(format: "%.0f ms per log-in", used / max(Double(count), 1) * 1000), "reported")
            }
            await client.close()
        }
    }

    /// Wrong-password log-ins, `inflight` at a time for `seconds`: how many were refused (401) and in how long.
    static func logins(_ client: ServiceClient, phone: String, inflight: Int, seconds: Double) async throws -> (Int, Double) {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<inflight {
                group.addTask {
                    var done = 0
                    while ContinuousClock.now < deadline {
                        do {
                            _ = try await client.call(Ops.Users.login, LoginParams(phoneNumber: phone, password: "a wrong password"))
                            throw ConfigurationError("users.login took a wrong password")
                        } catch let error as ServiceError where error.status == 401 {
                            done += 1
                        }
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        return (count, Double((ContinuousClock.now - start).milliseconds) / 1000)
    }

    /// A few per second: one decimal tells 2.6 from 3.4.
    static func perSecond(_ value: Double) -> BenchResult {
        BenchResult(text: String(format: "%.1f log-ins/s", value), value: value, unit: "log-ins/s")
    }
}

/// The value, or an error saying the benchmark's process is gone.
private func requireProcess(_ pid: Int32?) throws -> Int32 {
    guard let pid else { throw ConfigurationError("ride-users is not running") }
    return pid
}
