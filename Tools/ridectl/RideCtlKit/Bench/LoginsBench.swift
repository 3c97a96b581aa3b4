import ArgumentParser
import Foundation
import GatewayService
import Synchronization
import UsersService

/// `ridectl bench logins`: what one log-in costs `ride-users` — checking a password against its
/// stored PBKDF2-SHA256 hash (600 000 rounds), the whole of a log-in's CPU next to which the bus
/// and the database are noise — on one core and on all of them, and what share of that the
/// gateway's default attempt limits let one address or one account take.
struct BenchLoginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logins", abstract: "Log-ins per second ride-users can check (PBKDF2-SHA256, 600 000 rounds) on one core and on all.")

    @Option(help: "Seconds per measurement.") var seconds = 5.0
    @Option(help: "Threads for the all-cores figure.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @OptionGroup var format: BenchFormat

    mutating func validate() throws {
        guard seconds > 0, threads >= 1 else { throw ValidationError("--seconds must be positive and --threads at least 1") }
    }

    func run() throws {
        let hasher = PasswordHasher()
        let stored = try hasher.hash("the right password")
        let one = Self.rate(threads: 1, seconds: seconds) { _ = hasher.verify("a wrong password", against: stored) }
        let all = Self.rate(threads: threads, seconds: seconds) { _ = hasher.verify("a wrong password", against: stored) }
        let limits = RateLimitPolicy()
        var table = BenchTable(title: "ridectl bench logins — \(ProcessInfo.processInfo.activeProcessorCount) cores, PBKDF2-SHA256 \(hasher.rounds) rounds, \(seconds) s per run")
        table.add("log-ins checked, one core", Self.perSecond(one), String(format: "reported (%.0f ms each)", 1000 / one))
        table.add("log-ins checked, \(threads) threads", Self.perSecond(all), "reported")
        for (who, limit) in [("one address", limits.attemptsPerAddress), ("one account", limits.attemptsPerAccount)] {
            let share = Double(limit.perMinute) / 60 / one
            table.add("\(who) at its default limit (\(limit))", String(format: "%.0f%% of a core", share * 100), "reported")
        }
        try table.print(json: format.json)
    }

    /// A few per second: one decimal tells 2.6 from 3.4.
    static func perSecond(_ value: Double) -> BenchResult {
        BenchResult(text: String(format: "%.1f log-ins/s", value), value: value, unit: "log-ins/s")
    }

    /// Calls of `work` per second over `threads` threads running for `seconds`.
    static func rate(threads: Int, seconds: Double, _ work: @escaping @Sendable () -> Void) -> Double {
        let done = Atomic<Int>(0)
        let start = ContinuousClock.now
        let deadline = start + .seconds(seconds)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            while ContinuousClock.now < deadline {
                work()
                done.add(1, ordering: .relaxed)
            }
        }
        let elapsed = ContinuousClock.now - start
        return Double(done.load(ordering: .relaxed)) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
