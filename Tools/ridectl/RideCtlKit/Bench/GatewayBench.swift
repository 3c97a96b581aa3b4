import ArgumentParser
import AsyncHTTPClient
import Foundation
import PlatformLauncher
import ServiceKit
import SettingsKit
import Synchronization
import Wire

/// `ridectl bench gateway`: what a rider's app's requests cost through the gateway — its edge
/// (bearer token, limits, retries, headers) and the op behind it — as requests per second and
/// latency with many connections, and the gateway's CPU per request.
struct BenchGatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Requests per second, latency and the gateway's CPU per request on a rider's authenticated routes.",
        discussion: """
            Starts the bus, tracking, users, orders and a gateway (its limits raised out of the way); \
            signs a rider up and books one ride; then, for each route, --connections keep-alive \
            connections send it in a loop for --seconds (after a second of warm-up): GET /v1/me \
            (users.get) and GET /v1/orders/{id} (orders.get, the order shown as the rider may see \
            it). Point --bin-dir at another build's executables to compare two versions with the \
            same client.
            """)

    @Option(help: "Keep-alive connections sending at once.") var connections = 16
    @Option(help: "Seconds measured per route.") var seconds = 10.0
    @OptionGroup var bin: BinDirectoryOption
    @OptionGroup var format: BenchFormat

    func validate() throws {
        guard (1...512).contains(connections) else { throw ValidationError("--connections must be from 1 to 512") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
    }

    func run() async throws {
        try await BenchPlatform.measure(
            bench: "gateway", "\(connections) connections, \(Int(seconds)) s per route", bin: bin.path, json: format.json
        ) { platform, table in
            try await platform.startService("ride-users", ["--password-rounds", "1000"])
            try await platform.startService("ride-orders")
            let (port, http) = (try FreePort.next(), try FreePort.next())
            let gateway = PlatformCommands.gateway(
                binDirectory: platform.bin, bus: BusEndpoints(ingress: platform.ingress, egress: platform.egress, broker: platform.broker),
                http: "127.0.0.1:\(http)", listen: "127.0.0.1:\(port)",
                extra: ["--log-level", "warning", "--token-requests-per-min", "1000000", "--address-attempts-per-min", "100000"])
            let failures = try await platform.supervisor.launch([gateway])
            guard failures.isEmpty else { throw ConfigurationError(failures.joined(separator: "; ")) }
            let base = "http://127.0.0.1:\(port)"
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let rider = try await GatewayLoad.signUp(client, base)
            let order = try await GatewayLoad.send(
                client, "POST", base + "/v1/orders", token: rider,
                body: #"{"pickup":{"latitude":60.1699,"longitude":24.9384},"dropoff":{"latitude":60.1719,"longitude":24.9414}}"#)
            guard let orderID = order["id"]?.stringValue else { throw ConfigurationError("the booking did not answer an order: \(order)") }
            let pid = platform.supervisor.pid(of: "gateway")
            for (name, path) in [("GET /v1/me", "/v1/me"), ("GET /v1/orders/{id}", "/v1/orders/\(orderID)")] {
                let load = GatewayLoad(client: client, url: base + path, token: rider)
                _ = try await load.run(connections: connections, for: .seconds(1))
                let before = CPUTimes.now(pid.map { ["gateway": $0] } ?? [:])
                let result = try await load.run(connections: connections, for: .milliseconds(Int(seconds * 1000)))
                let cpu = CPUTimes.now(pid.map { ["gateway": $0] } ?? [:]).since(before).processes["gateway"] ?? .nan
                let perSecond = Double(result.latencies.count) / seconds
                table.add(
                    "\(name): requests", BenchResult(text: String(format: "%.0f req/s", perSecond), value: perSecond, unit: "req/s"),
                    "reported")
                table.add("\(name): latency p50", BenchTable.micros(result.percentiles.value(50)), "reported")
                table.add("\(name): latency p99", BenchTable.micros(result.percentiles.value(99)), "reported")
                table.add(
                    "\(name): gateway CPU per request", BenchTable.micros(cpu * 1_000_000 / Double(max(result.latencies.count, 1))),
                    "reported")
                if result.failures > 0 { table.add("\(name): failed", "\(result.failures)", "0", met: false) }
            }
            try await client.shutdown()
        }
    }
}

/// Requests sent in a loop on keep-alive connections, with a rider's bearer token.
struct GatewayLoad: Sendable {
    struct Result {
        var latencies: [Double] = []
        var failures = 0
        var percentiles: Percentiles { Percentiles(latencies) }
    }

    let client: HTTPClient
    let url: String
    let token: String

    /// `connections` loops for `duration`: each request's latency in µs, and how many failed.
    func run(connections: Int, for duration: Duration) async throws -> Result {
        let deadline = ContinuousClock.now + duration
        return await withTaskGroup(of: Result.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    var result = Result()
                    while ContinuousClock.now < deadline {
                        var request = HTTPClientRequest(url: url)
                        request.headers.add(name: "Authorization", value: "Bearer \(token)")
                        let started = ContinuousClock.now
                        do {
                            let response = try await client.execute(request, timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 20)
                            if response.status == .ok {
                                let elapsed = ContinuousClock.now - started
                                result.latencies.append(
                                    Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
                            } else {
                                result.failures += 1
                            }
                        } catch {
                            result.failures += 1
                        }
                    }
                    return result
                }
            }
            var total = Result()
            for await part in group {
                total.latencies += part.latencies
                total.failures += part.failures
            }
            return total
        }
    }

    /// One request; its JSON body, or an error naming the status.
    static func send(_ client: HTTPClient, _ method: String, _ url: String, token: String? = nil, body: String) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.body = .bytes(Array(body.utf8))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = Array((try await response.body.collect(upTo: 1 << 20)).readableBytesView)
        guard (200..<300).contains(Int(response.status.code)) else {
            throw ConfigurationError("\(method) \(url): \(response.status.code) \(String(decoding: bytes, as: UTF8.self))")
        }
        return try JSONCoding.decode(JSONValue.self, from: bytes)
    }

    /// A new rider, logged in: the access token.
    static func signUp(_ client: HTTPClient, _ base: String) async throws -> String {
        let phone = "+38050\(Int.random(in: 1_000_000...9_999_999))"
        _ = try await send(
            client, "POST", base + "/v1/users",
            body: #"{"role":"rider","name":"Bench","phone_number":"\#(phone)","password":"bench-password"}"#)
        let session = try await send(
            client, "POST", base + "/v1/sessions", body: #"{"phone_number":"\#(phone)","password":"bench-password"}"#)
        guard let token = session["token"]?.stringValue else { throw ConfigurationError("the log-in answered no token: \(session)") }
        return token
    }
}
