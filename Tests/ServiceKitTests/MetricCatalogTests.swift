import Foundation
import ServiceKit
import Testing

/// The metrics are declared once (`RideMetric`): every name the docs, the alert rules, the scrape
/// configs and the dashboard use is declared there, and every declared one is documented.
@Suite struct MetricCatalogTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String { try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) }

    /// Every file of `directory` (relative to the repository) ending in one of `extensions`.
    static func files(in directory: String, _ extensions: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(directory).path).sorted()
            .filter { extensions.contains(URL(fileURLWithPath: $0).pathExtension) }.map { "\(directory)/\($0)" }
    }

    /// The metric names in `text`: every word starting `ride_` or `process_`.
    static func metricNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"\b(ride|process)_[a-z0-9_]+\b"#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
    }

    /// The PromQL expressions of the dashboard.
    static func dashboardExpressions() throws -> [String] {
        let dashboard = try JSONSerialization.jsonObject(with: Data(try read("deploy/grafana/ridesharing.json").utf8)) as? [String: Any]
        let panels = dashboard?["panels"] as? [[String: Any]] ?? []
        return panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
    }

    @Test func namesFollowPrometheusConventionsAndAreDeclaredOnce() {
        let names = RideMetric.all.map(\.name)
        #expect(Set(names).count == names.count, "a name declared twice")
        for metric in RideMetric.all {
            #expect(
                metric.name.hasPrefix("ride_") || metric.name.hasPrefix("process_"), "\(metric.name): the platform's metrics start ride_")
            #expect(metric.name.range(of: #"^[a-z][a-z0-9_]*$"#, options: .regularExpression) != nil, "\(metric.name)")
            #expect((metric.kind == .counter) == metric.name.hasSuffix("_total"), "\(metric.name): counters, and only they, end _total")
            if metric.kind == .histogram { #expect(metric.name.hasSuffix("_seconds"), "\(metric.name): durations are in seconds") }
            #expect(!metric.help.isEmpty)
            for label in metric.labels {
                #expect(label.range(of: #"^[a-z][a-z0-9_]*$"#, options: .regularExpression) != nil, "\(metric.name): label \(label)")
            }
        }
        #expect(RideMetric.durationBuckets == RideMetric.durationBuckets.sorted(), "buckets ascending")
        #expect(
            RideMetric.durationBuckets.first! <= .milliseconds(1) && RideMetric.durationBuckets.last! >= .seconds(10),
            "sub-millisecond to seconds")
    }

    @Test func everyMetricTheDeployFilesQueryIsDeclared() throws {
        let files = try Self.files(in: "deploy/prometheus", ["yml"]) + Self.files(in: "deploy/grafana", ["json"])
        #expect(files.contains("deploy/prometheus/alerts.yml") && files.contains("deploy/grafana/ridesharing.json"))
        for file in files {
            for name in Self.metricNames(in: try Self.read(file)) {
                #expect(RideMetric.declaring(series: name) != nil, "\(file) uses \(name), which RideMetric does not declare")
            }
        }
    }

    @Test func theDashboardHasThePanelsAnOperatorNeeds() throws {
        let queried = Set(
            try Self.dashboardExpressions().flatMap { Self.metricNames(in: $0) }.compactMap { RideMetric.declaring(series: $0)?.name })
        for metric in [
            RideMetric.ridesCompleted, RideMetric.ridesCancelled, RideMetric.noDriverFound, RideMetric.reactionLatency,
            RideMetric.opDuration,
            RideMetric.queued, RideMetric.busRefused, RideMetric.locationsAccepted, RideMetric.httpRequests, RideMetric.httpDuration,
        ] {
            #expect(queried.contains(metric.name), "the dashboard shows \(metric.name)")
        }
    }

    @Test func docsListEveryMetricAndNoOther() throws {
        let docs = try Self.read("docs/metrics.md")
        let named = Self.metricNames(in: docs)
        for metric in RideMetric.all {
            #expect(
                docs.contains("| `\(metric.name)` | \(metric.kind.rawValue) |"),
                "docs/metrics.md has a row for \(metric.name) (\(metric.kind.rawValue))")
            let labels = metric.labels.isEmpty ? "" : metric.labels.map { "`\($0)`" }.joined(separator: ", ")
            #expect(
                docs.contains("| `\(metric.name)` | \(metric.kind.rawValue) | \(labels) |"),
                "docs/metrics.md: the labels of \(metric.name) are \(labels)")
        }
        for name in named {
            #expect(RideMetric.declaring(series: name) != nil, "docs/metrics.md names \(name), which RideMetric does not declare")
        }
        #expect(try Self.read("docs/operations.md").contains("(metrics.md)"), "docs/operations.md links the metrics page")
    }
}
