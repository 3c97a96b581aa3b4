import ArgumentParser
import Bus
import Foundation
import Geo
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Synchronization
import Wire
import ZeroMQ

struct BenchMemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory", abstract: "ride-tracking's resident memory as devices are added (100 000, then 1 000 000).")

    @Option(help: "Device counts to measure at, comma-separated.") var steps = "100000,1000000"
    @OptionGroup var bin: BinDirectoryOption

    @OptionGroup var format: BenchFormat

    func run() async throws {
        let counts = steps.split(separator: ",").compactMap { Int($0) }
        guard !counts.isEmpty, counts == counts.sorted() else { throw ValidationError("--steps must be increasing numbers") }
        let platform = try await BenchPlatform.start(bin: bin.path, name: "bench-memory")
        try await platform.report(
            BenchTable(title: "ridectl bench memory — ride-tracking resident memory (devices with a location, indexed and stored)"),
            json: format.json
        ) {
            table in
            let empty = try await platform.trackingMetrics()["process_resident_memory_bytes"] ?? 0
            table.add("0 devices", String(format: "%.0f MB", empty / 1_048_576), "reported")
            var loaded = 0
            for count in counts {
                Output.err("loading up to \(count) devices…\n")
                try await DriverLoad.load(drivers: count - loaded, first: loaded, broker: platform.broker)
                loaded = count
                let resident = try await platform.trackingMetrics()["process_resident_memory_bytes"] ?? 0
                table.add(
                    "\(count) devices",
                    String(format: "%.0f MB (%.0f bytes per device)", resident / 1_048_576, (resident - empty) / Double(count)), "reported")
            }
        }
    }
}
