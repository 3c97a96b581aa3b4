import Bus
import Foundation
import HummingbirdWSClient
import Logging
import ServiceKit
import Synchronization
import Testing

/// `ride-gateway` beside a `TestBus`, on free ports; ready when /health answers.
struct TestGateway: Sendable {
    let bus: TestBus
    let port: Int
    let statusPort: Int

    var base: String { "http://127.0.0.1:\(port)" }

    static func start(on bus: TestBus) async throws -> TestGateway {
        let gateway = TestGateway(bus: bus, port: try FreePort.next(), statusPort: try FreePort.next())
        try bus.supervisor.start(name: "gateway", executable: "\(Binaries.directory)/ride-gateway", arguments: [
            "--pub", bus.ingress, "--sub", bus.egress, "--broker", bus.broker, "--listen", "127.0.0.1:\(gateway.port)",
            "--http", "127.0.0.1:\(gateway.statusPort)", "--public-url", gateway.base, "--log-level", "debug",
            "--publishable-key", TestTracking.publishableKey,
        ])
        guard await waitUntilHealthy("http://127.0.0.1:\(gateway.statusPort)/health", timeout: .seconds(30), stillRunning: { bus.supervisor.isRunning("gateway") }) else {
            throw TestFailure("ride-gateway did not become healthy")
        }
        return gateway
    }

    /// One request; the status and the JSON body (`.null` when the body is not JSON).
    func request(_ method: String, _ path: String, token: String? = nil, _ json: String? = nil,
                 headers: [String: String] = [:]) async throws -> (status: Int, body: JSONValue) {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if json != nil { headers["Content-Type"] = "application/json" }
        let response = try await HTTPProbe.send(method, base + path, headers: headers, body: json.map { Array($0.utf8) }, timeout: .seconds(10))
        return (response.status, (try? JSONCoding.decode(JSONValue.self, from: Array(response.body))) ?? .null)
    }

    /// Signs up and logs in; returns the user's id and token.
    func signUp(_ json: String, phone: String, password: String) async throws -> (id: String, token: String) {
        let created = try await request("POST", "/v1/users", json)
        guard created.status == 201, let id = created.body["id"]?.stringValue else { throw TestFailure("sign-up: \(created)") }
        let session = try await request("POST", "/v1/sessions", #"{"phone_number":"\#(phone)","password":"\#(password)"}"#)
        guard let token = session.body["token"]?.stringValue else { throw TestFailure("log-in: \(session)") }
        return (id, token)
    }
}

/// A WebSocket client of `/v1/orders/{id}/live` that keeps every message it receives.
final class LiveClient: Sendable {
    final class Log: Sendable {
        let messages = Mutex<[JSONValue]>([])
    }
    private let log = Log()
    private let task: Task<Void, Never>

    init(url: String) {
        let log = self.log
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, logger: Logger(label: "live-client")) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message, let value = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8)) else { continue }
                    log.messages.withLock { $0.append(value) }
                }
            }
        }
    }

    var received: [JSONValue] { log.messages.withLock { $0 } }

    /// The statuses received (the snapshot's first), in order.
    var statuses: [String] {
        received.compactMap { message in
            guard message["type"] == "status" || message["type"] == "snapshot" else { return nil }
            return message["order"]?["status"]?.stringValue
        }
    }

    func close() { task.cancel() }
}
