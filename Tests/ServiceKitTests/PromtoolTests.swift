import Foundation
import TestProcess
import Testing

/// Where `promtool` is installed; nil: it is not.
let promtool: String? = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// The deploy files as Prometheus reads them: `promtool` (Debian's `prometheus` package, which
/// `make test-deps` installs) checks the alert rules, the scrape configs and every query of the
/// dashboard. Skipped only where promtool is not installed.
@Suite(.enabled(if: promtool != nil, "promtool is not installed (make test-deps)"))
struct PromtoolTests {
    static var deploy: URL { MetricCatalogTests.root.appendingPathComponent("deploy") }

    /// Runs promtool with `arguments` in `directory` (off the cooperative pool); its exit status and output.
    static func run(_ arguments: [String], in directory: URL) async throws -> (status: Int32, output: String) {
        let outcome = try await TestProcess.run(promtool!, arguments, in: directory)
        return (outcome.status, outcome.stdout + outcome.stderr)
    }

    @Test func theAlertRulesAreClean() async throws {
        let (status, output) = try await Self.run(["check", "rules", "alerts.yml"], in: Self.deploy.appendingPathComponent("prometheus"))
        #expect(status == 0, "\(output)")
        #expect(output.contains("SUCCESS"))
    }

    @Test(arguments: ["prometheus.yml", "local.yml"]) func theScrapeConfigIsValid(_ file: String) async throws {
        let (status, output) = try await Self.run(["check", "config", file], in: Self.deploy.appendingPathComponent("prometheus"))
        #expect(status == 0, "\(output)")
    }

    /// Debian builds Prometheus without Kubernetes discovery: there, that one field is all it may refuse.
    @Test func theKubernetesScrapeConfigIsValid() async throws {
        let (status, output) = try await Self.run(
            ["check", "config", "kubernetes.yml"], in: Self.deploy.appendingPathComponent("prometheus"))
        let withoutKubernetes = output.contains("field kubernetes_sd_configs not found")
        #expect(status == 0 || withoutKubernetes, "\(output)")
        if withoutKubernetes {
            // The rest, checked with the job's discovery swapped for a static target.
            let text = try String(contentsOf: Self.deploy.appendingPathComponent("prometheus/kubernetes.yml"), encoding: .utf8)
                .replacingOccurrences(
                    of: "kubernetes_sd_configs:\n      - role: pod", with: "static_configs:\n      - targets: [\"localhost:9100\"]")
            let scratch = try Self.scratch()
            try text.write(to: scratch.appendingPathComponent("kubernetes.yml"), atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(
                at: Self.deploy.appendingPathComponent("prometheus/alerts.yml"), to: scratch.appendingPathComponent("alerts.yml"))
            let (status, output) = try await Self.run(["check", "config", "kubernetes.yml"], in: scratch)
            #expect(status == 0, "\(output)")
        }
    }

    /// Every panel's query parses, as a recording rule of its own.
    @Test func everyDashboardQueryIsValidPromQL() async throws {
        let expressions = try MetricCatalogTests.dashboardExpressions()
        #expect(expressions.count >= 10)
        var rules = "groups:\n  - name: dashboard\n    rules:\n"
        for (index, expression) in expressions.enumerated() {
            let quoted = expression.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            rules += "      - record: dashboard:query\(index)\n        expr: \"\(quoted)\"\n"
        }
        let scratch = try Self.scratch()
        try rules.write(to: scratch.appendingPathComponent("dashboard.yml"), atomically: true, encoding: .utf8)
        let (status, output) = try await Self.run(["check", "rules", "dashboard.yml"], in: scratch)
        #expect(status == 0, "\(output)\n\(rules)")
    }

    /// The test must be able to fail: a broken rule is refused.
    @Test func aBrokenRuleIsRefused() async throws {
        let scratch = try Self.scratch()
        try "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(ride_x_total[5m]) > \n".write(
            to: scratch.appendingPathComponent("broken.yml"), atomically: true, encoding: .utf8)
        #expect(try await Self.run(["check", "rules", "broken.yml"], in: scratch).status != 0)
    }

    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("promtool-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
