import Bus
import Foundation
import Testing

/// The ports every deployment file names are the ones the platform declares (`RideProcess`,
/// `PlatformPorts`): compose, Kubernetes, Prometheus and the image's health check are checked
/// against that one declaration, so a port changed there and not here fails.
@Suite struct DeployPortsTests {
    static let files = [
        "docker-compose.yml", "deploy/monitoring.compose.yml", "deploy/healthcheck.sh", "deploy/prometheus/prometheus.yml",
        "deploy/prometheus/local.yml",
        "deploy/prometheus/kubernetes.yml",
    ]

    static func text(_ path: String) throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
    }

    static var kubernetesFiles: [String] {
        let base = Repository.root.appendingPathComponent("deploy/kubernetes/base")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { "deploy/kubernetes/base/\($0)" }
    }

    /// A port of `process`' shard `shard` (0 unless sharded) as declared.
    static func declared(_ base: Int, shard: Int) -> Int { base + PlatformPorts.shardStride * shard }

    /// Every `["ride-X", …]` command line: its --http, --shard, --ingest, --pub, --sub, --broker and --listen.
    @Test func everyCommandLineListensOnTheDeclaredPorts() throws {
        let command = try Regex(#"\["ride-([a-z]+)"((?:,\s*"[^"]*")*)\s*\]"#)
        let argument = try Regex(#""([^"]*)""#)
        var checked = 0
        for path in Self.files + Self.kubernetesFiles {
            let text = try Self.text(path)
            for match in text.matches(of: command) {
                let name = String(match.output[1].substring!)
                guard let process = RideProcess(rawValue: name) else { continue }
                let arguments = String(match.output[2].substring!).matches(of: argument).map { String($0.output[1].substring!) }
                func value(_ flag: String) -> String? {
                    arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
                }
                func port(_ flag: String) -> Int? { value(flag).flatMap { $0.split(separator: ":").last.flatMap { Int($0) } } }
                let shard = value("--shard").flatMap { $0.split(separator: "/").first.flatMap { Int($0) } } ?? 0
                let expected: [(String, Int)] = [
                    ("--http", Self.declared(process.httpPort, shard: shard)),
                    ("--ingest", Self.declared(PlatformPorts.trackingIngest, shard: shard)),
                    ("--pub", PlatformPorts.eventIngress), ("--sub", PlatformPorts.eventEgress), ("--broker", PlatformPorts.broker),
                    ("--listen", PlatformPorts.gateway),
                ]
                for (flag, declared) in expected {
                    guard let found = port(flag) else { continue }
                    checked += 1
                    #expect(found == declared, "\(path): \(process.executable) \(flag) on \(found), declared \(declared)")
                }
            }
        }
        #expect(checked > 20, "the command lines of compose and Kubernetes were read")
    }

    /// Prometheus' targets: each service's scrape port is its declared `--http` port.
    @Test func prometheusScrapesTheDeclaredPorts() throws {
        var checked = 0
        let dns = try Regex(#"names: \[([a-z]+)(?:-(\d+))?\], type: A, port: (\d+)"#)
        for match in try Self.text("deploy/prometheus/prometheus.yml").matches(of: dns) {
            guard let process = RideProcess(rawValue: String(match.output[1].substring!)) else { continue }
            // tracking-K is shard K; bus-2 a second bus on a host of its own, on the same port.
            let shard = process == .tracking ? match.output[2].substring.flatMap { Int($0) } ?? 0 : 0
            checked += 1
            #expect(Int(match.output[3].substring!) == Self.declared(process.httpPort, shard: shard), "prometheus.yml: \(match.output[0])")
        }
        let local = try Regex(#"targets: \[([^\]]*)\], labels: \{ service: ([a-z]+) \}"#)
        for match in try Self.text("deploy/prometheus/local.yml").matches(of: local) {
            guard let process = RideProcess(rawValue: String(match.output[2].substring!)) else { continue }
            let ports = String(match.output[1].substring!).split(separator: ",").compactMap {
                $0.split(separator: ":").last.flatMap { Int($0.filter(\.isNumber)) }
            }
            for (shard, port) in ports.enumerated() {
                checked += 1
                #expect(port == Self.declared(process.httpPort, shard: shard), "local.yml: \(match.output[0])")
            }
        }
        #expect(checked >= 14, "both Prometheus configurations were read")
    }

    /// The image's health check falls back on each executable's default port; each Kubernetes
    /// manifest tells Prometheus its process's port.
    @Test func theHealthCheckAndThePodAnnotationsNameTheDeclaredPorts() throws {
        var checked = 0
        let fallback = try Regex(#"ride-([a-z]+)\) address=:(\d+)"#)
        for match in try Self.text("deploy/healthcheck.sh").matches(of: fallback) {
            let process = try #require(RideProcess(rawValue: String(match.output[1].substring!)), "healthcheck.sh names \(match.output[0])")
            checked += 1
            #expect(Int(match.output[2].substring!) == process.httpPort, "healthcheck.sh: \(match.output[0])")
        }
        #expect(checked == RideProcess.allCases.count, "healthcheck.sh knows every process")
        let annotation = try Regex(#"prometheus\.io/port: "(\d+)""#)
        for path in Self.kubernetesFiles {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            guard let process = RideProcess(rawValue: name) else { continue }
            for match in try Self.text(path).matches(of: annotation) {
                checked += 1
                #expect(Int(match.output[1].substring!) == process.httpPort, "\(path): \(match.output[0])")
            }
        }
        #expect(checked > RideProcess.allCases.count + 5, "the manifests' annotations were read")
    }
}
