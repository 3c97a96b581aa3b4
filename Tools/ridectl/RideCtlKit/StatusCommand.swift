import ArgumentParser
import Bus
import Foundation
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Wire

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the bus's health and which services have workers.",
        discussion: """
            Asks the bus's /health for its counts and, through the broker, 8/MMI mmi.service for \
            each platform service. Exit status 0 when the bus is up, 1 when it is not.
            """)

    @Option(help: "Services to ask about (comma-separated). Default: the platform's services and any the broker knows.")
    var services: String?

    @Flag(help: "Print the result as JSON.")
    var json = false

    @OptionGroup var bus: BusAddresses

    mutating func validate() throws {
        _ = try withValidation { try bus.brokerEndpoint() }
    }

    struct Row: Codable {
        var service: String
        var mmi: String
        var workers: Int?
        var idle: Int?
        var queued: Int?
        var requests: Int?
    }

    @WireKeys
    struct Report: Codable {
        var bus: String
        var busURL: String
        var health: JSONValue?
        var services: [Row]
        /// Orders by status and those no driver accepted in time, when `orders` answers.
        var orders: OrderStats?
    }

    func run() async throws {
        let healthURL = bus.busHealthURL().hasSuffix("/health") ? bus.busHealthURL() : bus.busHealthURL() + "/health"
        var health: JSONValue?
        var busState = "down"
        if let response = try? await HTTPProbe.get(healthURL), response.status == 200 {
            health = try? JSONCoding.decode(JSONValue.self, from: Array(response.body))
            busState = health?["status"]?.stringValue ?? "up"
        }
        let known = health?["details"]?["services"]?.objectValue ?? [:]
        var names = services?.split(separator: ",").map(String.init) ?? BusContract.Service.all
        if services == nil {
            names += known.keys.filter { !names.contains($0) }.sorted()
        }
        var rows: [Row] = []
        var orders: OrderStats?
        if busState != "down" {
            var options = MDPClient.Options()
            options.timeout = .milliseconds(1500)
            options.attempts = 1
            try await bus.secure()
            let client = try await ServiceClient(broker: try bus.brokerEndpoint(), options: options, logger: CLILogging.logger)
            for name in names {
                let mmi: String
                do {
                    mmi = try await client.hasWorkers(name) ? "200" : "404"
                } catch {
                    mmi = "no reply"
                }
                let counts = known[name]
                func int(_ key: String) -> Int? { counts?[key]?.numberValue.map { Int($0) } }
                rows.append(
                    Row(
                        service: name, mmi: mmi, workers: int("workers") ?? 0, idle: int("idle"), queued: int("queued"),
                        requests: int("requests")))
            }
            if rows.contains(where: { $0.service == BusContract.Service.orders && $0.mmi == "200" }) {
                orders = try? await client.call(Ops.Orders.stats, StatsParams(openLimit: 0))
            }
            await client.close()
        }
        let report = Report(bus: busState, busURL: healthURL, health: health, services: rows, orders: orders)
        if json {
            Output.out(String(decoding: try JSONCoding.encoder(pretty: true).encode(report), as: UTF8.self) + "\n")
        } else {
            Output.out(render(report))
        }
        if busState == "down" { throw ExitCode(1) }
    }

    func render(_ report: Report) -> String {
        let colored = Output.stdoutIsTerminal
        guard report.bus != "down", let details = report.health?["details"] else {
            let line = "bus: down — no answer from \(report.busURL) (is ride-bus running? `make run` starts it)\n"
            return colored ? ANSI.red(line) : line
        }
        let uptime = report.health?["uptime_seconds"]?.numberValue ?? 0
        let events = details["events"]?["forwarded"]?.numberValue ?? 0
        let requests = details["requests"]?["received"]?.numberValue ?? 0
        var text =
            "bus: \(colored ? ANSI.green(report.bus) : report.bus)  uptime \(Self.duration(uptime))  events forwarded \(Int(events))  requests \(Int(requests))  (\(report.busURL))\n\n"
        text += "SERVICE".padding(toLength: 16, withPad: " ", startingAt: 0) + "WORKERS  IDLE  QUEUED  REQUESTS  MMI\n"
        for row in report.services {
            func cell(_ value: Int?, _ width: Int) -> String {
                (value.map(String.init) ?? "-").padding(toLength: width, withPad: " ", startingAt: 0)
            }
            let mmi =
                row.mmi == "200"
                ? (colored ? ANSI.green("200 up") : "200 up") : (colored ? ANSI.dim("\(row.mmi) no workers") : "\(row.mmi) no workers")
            text +=
                row.service.padding(toLength: 16, withPad: " ", startingAt: 0) + cell(row.workers, 9) + cell(row.idle, 6)
                + cell(row.queued, 8) + cell(row.requests, 10) + mmi
                + "\n"
        }
        if let orders = report.orders {
            let counts = OrderStatus.allCases.compactMap { status in orders.byStatus[status.rawValue].map { "\(status.rawValue) \($0)" } }
            text +=
                "\norders: \(counts.isEmpty ? "none" : counts.joined(separator: "  "))  (no driver found: \(orders.noDriverFound ?? 0)\(orders.paymentsFailed.map { ", payments failed: \($0)" } ?? ""))\n"
        }
        return text
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds)
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(s % 60)s" }
        return "\(s / 3600)h\(s / 60 % 60)m"
    }
}
