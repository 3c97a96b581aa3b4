import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// Where Prometheus' server is installed; nil: it is not.
let prometheusServer: String? = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// Debian's real `prometheus` scraping a platform of real processes every second: every target
/// is up (its /metrics parses), and after a ride the reaction p99 query answers a number; the
/// gateway's route counter and the rides counters are there. Skipped only where prometheus is
/// not installed (`make test-deps` installs it).
@Suite(.serialized, .enabled(if: prometheusServer != nil, "prometheus is not installed (make test-deps)"))
struct PrometheusIntegrationTests {
    typealias Platform = OrdersIntegrationTests.Platform

    static let reactionP99 = "histogram_quantile(0.99, sum by (le, transition) (rate(\(RideMetric.reactionLatency.name)_bucket[1m])))"

    /// A scrape config of the test's processes: one target per status port, labelled with its service.
    static func config(_ targets: [(service: String, port: Int)]) -> String {
        var text =
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: ridesharing\n    static_configs:\n"
        for target in targets {
            text += "      - { targets: [\"127.0.0.1:\(target.port)\"], labels: { service: \(target.service) } }\n"
        }
        return text
    }

    /// The result of an instant query, as the HTTP API answers it.
    static func query(_ port: Int, _ promQL: String) async throws -> [JSONValue] {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/api/v1/query")!
        components.queryItems = [URLQueryItem(name: "query", value: promQL)]
        let encoded = components.percentEncodedQuery!.replacingOccurrences(of: "+", with: "%2B")
        let response = try await HTTPProbe.get("http://127.0.0.1:\(port)/api/v1/query?\(encoded)", timeout: .seconds(30))
        let body = try JSONCoding.decode(JSONValue.self, from: Array(response.body))
        guard response.status == 200, body["status"] == "success", case .array(let result)? = body["data"]?["result"] else {
            throw TestFailure("query \(promQL): \(response.status) \(body)")
        }
        return result
    }

    /// The finite numbers of a query's result (its series' values).
    static func numbers(_ result: [JSONValue]) -> [Double] {
        result.compactMap { $0["value"]?[1]?.stringValue.flatMap(Double.init) }.filter(\.isFinite)
    }

    @Test func prometheusScrapesThePlatformAndTheReactionP99IsANumber() async throws {
        try await withTestBus("prometheus") { bus in
            let platform = try await Platform.start(bus)
            let gateway = try await TestGateway.start(on: bus)
            let port = try FreePort.next()
            let directory = "\(bus.scratch)/prometheus"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let targets = [
                ("bus", bus.httpPort), ("users", platform.users.httpPort), ("tracking", platform.tracking.process.httpPort),
                ("trips", platform.trips.httpPort),
                ("orders", platform.orders.httpPort), ("gateway", gateway.statusPort),
            ]
            try Self.config(targets).write(toFile: "\(directory)/prometheus.yml", atomically: true, encoding: .utf8)
            try bus.supervisor.start(
                name: "prometheus", executable: prometheusServer!,
                arguments: [
                    "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                    "--web.listen-address=127.0.0.1:\(port)",
                ])
            // Every target scraped: their /metrics is text Prometheus takes.
            try await eventually("prometheus scrapes every target", timeout: .seconds(60)) {
                let up = (try? await Self.query(port, "up == 1")) ?? []
                return up.count == targets.count
            }

            // A ride, from booking to its end, and a request to the gateway.
            let id = try await LifecycleIntegrationTests.toPickup(platform)
            let order = #""id":"\#(id)""#
            #expect(try await platform.call("start_ride", as: platform.dan, order).status == 200)
            try await LifecycleIntegrationTests.status(platform, id, is: "DROPPING_OFF")
            try await LifecycleIntegrationTests.drive(platform, LifecycleIntegrationTests.ride, now: true, batch: 2)
            try await LifecycleIntegrationTests.status(platform, id, is: "REACHED_DROPOFF")
            #expect(try await platform.call("end_ride", as: platform.dan, order).body["status"] == "COMPLETED")
            #expect(try await gateway.request("GET", "/openapi.json").status == 200)

            try await eventually("the reaction p99 is a number", timeout: .seconds(30)) {
                !Self.numbers(try await Self.query(port, Self.reactionP99)).isEmpty
            }
            let p99 = try await Self.query(port, Self.reactionP99)
            #expect(Self.numbers(p99).allSatisfy { $0 > 0 && $0 <= 30 }, "p99 per transition: \(p99)")
            #expect(p99.contains { $0["metric"]?["transition"] == "ACCEPTED->PICKING_UP" && Self.numbers([$0]).count == 1 }, "\(p99)")
            // Scraped once a second: the ride's end shows in the scrape after it (under load, a few later).
            try await eventually("one ride completed", timeout: .seconds(15)) {
                Self.numbers(try await Self.query(port, RideMetric.ridesCompleted.name)) == [1]
            }
            try await eventually("the gateway's route counter is scraped", timeout: .seconds(10)) {
                let routes = try await Self.query(port, #"\#(RideMetric.httpRequests.name){method="GET",status="200"}"#)
                return routes.contains { ($0["metric"]?["route"]?.stringValue ?? "").contains("openapi.json") && Self.numbers([$0]) == [1] }
            }
            try await eventually("the op's histogram counts end_ride once", timeout: .seconds(15)) {
                Self.numbers(
                    try await Self.query(port, #"\#(RideMetric.opDuration.name)_count{service="orders",op="end_ride",outcome="ok"}"#)) == [
                        1
                    ]
            }
            // Tracking's counter is copied in at each scrape (1 s apart): the last fixes show a scrape later.
            try await eventually("the ingest counter counts the drive's fixes", timeout: .seconds(15)) {
                (Self.numbers(try await Self.query(port, "sum(\(RideMetric.locationsAccepted.name))")).first ?? 0) > 10
            }
            _ = await bus.supervisor.stop("prometheus", grace: .seconds(5))
        }
    }
}
