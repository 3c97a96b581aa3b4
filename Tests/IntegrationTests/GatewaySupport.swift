import Bus
import Foundation
import HummingbirdWSClient
import Logging
import PlatformLauncher
import ServiceKit
import Synchronization
import Testing
import Wire

/// `ride-gateway` beside a `TestBus`, on free ports; ready when /health answers.
struct TestGateway: Sendable {
    let port: Int
    let statusPort: Int
    /// Sends a request again after `503 storage_unavailable` or, from the ingest, `503
    /// store_unavailable`, and after a `429` once its `Retry-After` has passed (each stored
    /// nothing), as an app does: for a platform whose database may be unreachable for a moment
    /// (just after PostgreSQL restarted), shared with other apps from the same address.
    var retriesUnavailable = false

    var base: String { "http://127.0.0.1:\(port)" }

    /// `arguments`: more flags (the limits'); `name`: the process's, for a second gateway on the bus.
    static func start(on bus: TestBus, arguments: [String] = [], name: String = "gateway") async throws -> TestGateway {
        let gateway = TestGateway(port: try FreePort.next(), statusPort: try FreePort.next())
        let process = PlatformCommands.gateway(
            name: name, binDirectory: Binaries.directory, bus: bus.endpoints, http: "127.0.0.1:\(gateway.statusPort)",
            listen: "127.0.0.1:\(gateway.port)",
            extra: ["--public-url", gateway.base, "--log-level", "debug", "--publishable-key", TestTracking.publishableKey] + arguments)
        let failures = try await bus.supervisor.launch([process], environment: bus.environment)
        guard failures.isEmpty else { throw TestFailure("ride-gateway: \(failures.joined(separator: "; "))") }
        return gateway
    }

    /// One request; the status and the JSON body (`.null` when the body is not JSON).
    func request(
        _ method: String, _ path: String, token: String? = nil, _ json: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> (status: Int, body: JSONValue) {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if json != nil { headers["Content-Type"] = "application/json" }
        for attempt in 1... {
            let response = try await HTTPProbe.send(
                method, base + path, headers: headers, body: json.map { Array($0.utf8) }, timeout: .seconds(10))
            let body = (try? JSONCoding.decode(JSONValue.self, from: Array(response.body))) ?? .null
            let storedNothing = body["error"]?["code"] == "storage_unavailable" || body["error"]?["code"] == "store_unavailable"
            // A keyed request may go again whatever the 503 says: its repeat is answered what the first
            // did, or told the first is still in progress.
            let keyed = headers["Idempotency-Key"] != nil
            let inProgress = keyed && response.status == 409 && body["error"]?["code"] == "request_in_progress"
            let limited = response.status == 429
            guard retriesUnavailable, (response.status == 503 && (storedNothing || keyed)) || inProgress || limited, attempt < 20 else {
                return (response.status, body)
            }
            let wait = limited ? min(response.headers["retry-after"].flatMap { Int($0) } ?? 1, 30) * 1000 + Int.random(in: 0..<1000) : 500
            try await Task.sleep(for: .milliseconds(wait))
        }
        fatalError("unreachable")
    }

    /// Signs up and logs in; returns the user's id and token.
    func signUp(_ json: String, phone: String, password: String) async throws -> (id: String, token: String) {
        // Keyed, as the apps do: a sign-up whose answer was late (users hashing many passwords) is
        // sent again and gets the account it made.
        let created = try await request("POST", "/v1/users", json, headers: ["Idempotency-Key": "sign-up-\(phone)"])
        // 200: the gateway's call was sent again after a slow first answer, and users answered the
        // repeat of the same registration with the account it made (what a retried sign-up gets).
        guard created.status == 201 || created.status == 200, let id = created.body["id"]?.stringValue else {
            throw TestFailure("sign-up: \(created)")
        }
        let session = try await request(
            "POST", "/v1/sessions", #"{"phone_number":"\#(phone)","password":"\#(password)"}"#,
            headers: ["Idempotency-Key": "log-in-\(phone)-\(UUID().uuidString.prefix(8))"])
        guard let token = session.body["token"]?.stringValue else { throw TestFailure("log-in: \(session)") }
        return (id, token)
    }
}

/// A WebSocket client of `/v1/orders/{id}/live` that keeps every message it receives.
final class LiveClient: Sendable {
    final class Log: Sendable {
        let messages = Mutex<[JSONValue]>([])
        /// How the connection ended (the close frame, or the error), once it has.
        let ending = Mutex<String?>(nil)
    }
    private let log = Log()
    private let task: Task<Void, Never>

    init(url: String) {
        let log = self.log
        task = Task {
            do {
                let close = try await WebSocketClient.connect(url: url, logger: Logger(label: "live-client")) { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let value = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
                        else { continue }
                        log.messages.withLock { $0.append(value) }
                    }
                }
                log.ending.withLock { $0 = "closed: \(String(describing: close))" }
            } catch {
                log.ending.withLock { $0 = "failed: \(error)" }
            }
        }
    }

    var received: [JSONValue] { log.messages.withLock { $0 } }
    /// How the connection ended, for a failure message ("open" while it is).
    var ending: String { log.ending.withLock { $0 } ?? "open" }

    /// The statuses received (the snapshot's first), in order.
    var statuses: [String] {
        received.compactMap { message in
            guard message["type"] == "status" || message["type"] == "snapshot" else { return nil }
            return message["order"]?["status"]?.stringValue
        }
    }

    func close() { task.cancel() }
}

/// Debian's chromium, headless: loads a page, lets its scripts run for `budget` of virtual time
/// (timers fast-forward; fetches are real), and returns the DOM as the scripts left it.
enum HeadlessBrowser {
    static let executable = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func dom(_ url: String, budget: Duration = .seconds(3)) async throws -> String {
        guard let executable else { throw TestFailure("chromium is not installed (make test installs it: apt-get install chromium)") }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let (status, out, err) = try await runCommand(
            executable,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)",
                "--virtual-time-budget=\(budget.milliseconds)", "--dump-dom", url,
            ], timeout: .seconds(60))
        guard status == 0, out.contains("</html>") else {
            throw TestFailure(
                "chromium exited \(status) on \(url), the page \(out.isEmpty ? "empty" : "cut: \(out.suffix(300))"): \(err.suffix(1500))")
        }
        return out
    }

    /// The value of `attribute` on the element whose id is `id` (nil when either is missing).
    static func attribute(_ attribute: String, of id: String, in dom: String) -> String? {
        guard let tag = dom.range(of: #"<[^>]*id="\#(id)"[^>]*>"#, options: .regularExpression).map({ String(dom[$0]) }),
            let value = tag.range(of: #"\#(attribute)="[^"]*""#, options: .regularExpression)
        else { return nil }
        return String(tag[value].dropFirst(attribute.count + 2).dropLast())
    }

    /// The text inside the element whose id is `id` (up to its first child tag).
    static func text(of id: String, in dom: String) -> String? {
        guard let range = dom.range(of: #"id="\#(id)"[^>]*>[^<]*"#, options: .regularExpression) else { return nil }
        return String(dom[range].split(separator: ">", maxSplits: 1).last ?? "")
    }
}
