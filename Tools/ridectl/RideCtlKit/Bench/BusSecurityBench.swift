import ArgumentParser
import Foundation
import PlatformLauncher
import ServiceKit
import SettingsKit
import Wire

/// `ridectl bench bus-security`: what CURVE and the roles cost the bus. It runs `ridectl bench bus`
/// as a child process plain, then with `--curve`, alternating for `--rounds` rounds (the machine's
/// speed drifts: only interleaved runs compare), keeps each side's best figure, and holds the
/// difference to `--max-cost`.
struct BenchBusSecurityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bus-security",
        abstract: "What CURVE and roles cost the bus: `bench bus` plain and with --curve, interleaved, best of each.",
        discussion: """
            Each run is a fresh ride-bus and echo workers (the secured ones with fresh keys, every \
            process under its role). Compares CloudEvents end to end, MDP latency and pipelined \
            throughput over TCP and over a Unix socket; exits 1 if security costs more than --max-cost.
            """)

    @Option(help: "Rounds of plain vs. secured.") var rounds = 3
    @Option(help: "Seconds per event-throughput measurement.") var seconds = 3.0
    @Option(name: .customLong("latency-requests"), help: "Sequential requests for the latency figures.") var latencyRequests = 10_000
    @Option(help: "Requests for the pipelined throughput figures.") var requests = 200_000
    @Option(name: .customLong("max-cost"), help: "The most security may cost, in percent of the plain figure.") var maxCost = 15.0
    @OptionGroup var format: BenchFormat
    @OptionGroup var processes: BusBenchProcesses

    mutating func validate() throws {
        guard rounds >= 1, seconds > 0, latencyRequests >= 100, requests >= 1000, maxCost > 0 else {
            throw ValidationError("every count must be positive (latency-requests ≥ 100, requests ≥ 1000)")
        }
    }

    /// One compared figure: the start of its row's name in `bench bus`, and whether more is better.
    struct Figure {
        let row: String
        let higherIsBetter: Bool
    }

    static let figures: [Figure] =
        ["tcp", "ipc"].map { Figure(row: BenchBusCommand.Measure.cloudEvents(over: $0), higherIsBetter: true) }
        + ["tcp", "ipc"].flatMap { transport in
            [
                Figure(row: BenchBusCommand.Measure.latencyP50(over: transport), higherIsBetter: false),
                Figure(row: BenchBusCommand.Measure.pipelined(over: transport), higherIsBetter: true),
            ]
        }

    func run() throws {
        let me = "\(processes.bin.path)/ridectl"
        var best: [Bool: [BenchResult]] = [:]
        for round in 1...rounds {
            for secured in [false, true] {
                Output.err("round \(round)/\(rounds): \(secured ? "CURVE and roles" : "plain")…\n")
                let rows = try runBusBench(executable: me, secured: secured)
                best[secured] = try Self.figures.enumerated().map { index, figure in
                    guard let row = rows.first(where: { $0.measure.hasPrefix(figure.row) }), let value = row.value else {
                        throw ConfigurationError("ridectl bench bus printed no figure for '\(figure.row)'")
                    }
                    let result = BenchResult(text: row.result, value: value, unit: row.unit ?? "")
                    guard let kept = best[secured]?[index], let keptValue = kept.value else { return result }
                    return (figure.higherIsBetter ? value > keptValue : value < keptValue) ? result : kept
                }
            }
        }
        var table = BenchTable(
            bench: "bus-security",
            "plain vs. CURVE and roles, interleaved, best of \(rounds)"
                + (processes.noPacking ? ", 7/MDP's frames (--no-packing)" : "")
        )
        for (index, figure) in Self.figures.enumerated() {
            guard let plain = best[false]?[index], let secured = best[true]?[index], let p = plain.value, let s = secured.value, p > 0
            else { continue }
            let cost = figure.higherIsBetter ? (1 - s / p) * 100 : (s / p - 1) * 100
            table.add(
                "\(figure.row): plain → secured", "\(plain.text) → \(secured.text)", String(format: "cost ≤ %.0f%%: %.1f%%", maxCost, cost),
                met: cost <= maxCost)
        }
        try table.print(json: format.json)
    }

    /// The rows of one `ridectl bench bus --json` run; its exit status is ignored (its own targets
    /// are not this command's), its output is not.
    private func runBusBench(executable: String, secured: Bool) throws -> [BusBenchRow] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            [
                "bench", "bus", "--json", "--rounds", "1", "--seconds", "\(seconds)", "--latency-requests", "\(latencyRequests)",
                "--requests", "\(requests)",
            ] + (secured ? ["--curve"] : []) + processes.arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let document = try? JSONCoding.decode(BusBenchDocument.self, from: Array(data)) else {
            throw ConfigurationError(
                "ridectl bench bus\(secured ? " --curve" : "") exited \(process.terminationStatus) without its JSON table")
        }
        return document.rows
    }
}

/// What `bench bus-security` reads of `BenchTable`'s JSON.
private struct BusBenchDocument: Decodable {
    var rows: [BusBenchRow]
}

private struct BusBenchRow: Decodable {
    var measure: String
    var result: String
    var value: Double?
    var unit: String?
}

/// What `bench bus` and `bench bus-security` both take: where the executables are, and how ride-bus runs.
struct BusBenchProcesses: ParsableArguments {
    @Flag(
        name: .customLong("no-packing"),
        help: "Start ride-bus with --no-packing: the load and the echo workers send 7/MDP's frames, not one packed frame.")
    var noPacking = false

    @OptionGroup var bin: BinDirectoryOption

    /// ride-bus's own flags.
    var busFlags: [String] { noPacking ? ["--no-packing"] : [] }

    /// These options again, for a `ridectl bench bus` it starts.
    var arguments: [String] { busFlags + (bin.flag.map { ["--bin-dir", $0] } ?? []) }
}
