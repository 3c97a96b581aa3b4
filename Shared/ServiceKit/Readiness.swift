import Synchronization
import Wire

/// What a process needs before it can do its job — its database, its registration with the broker,
/// its subscriptions on the bus — each a check that says why it is not ready, or nil. `/readyz`
/// answers 200 when every check passes, else 503 naming the ones that fail; `/livez` only says the
/// process runs (a load balancer stops sending to an unready process; an orchestrator restarts a
/// dead one, not an unready one).
public final class Readiness: Sendable {
    /// nil: ready; otherwise why not, for an operator (`no word from the broker at ipc://…`).
    public typealias Check = @Sendable () async -> String?

    private let checks = Mutex<[(name: String, check: Check)]>([])

    public init() {}

    /// Adds a check; the names are the keys of `/readyz`'s `checks`.
    public func add(_ name: String, _ check: @escaping Check) {
        checks.withLock { $0.append((name, check)) }
    }

    public func report(service: String) async -> ReadinessReport {
        var results: [String: String] = [:]
        for (name, check) in checks.withLock({ $0 }) {
            results[name] = await check() ?? "ok"
        }
        return ReadinessReport(service: service, checks: results)
    }
}

/// The body of `/readyz`: `{"status":"ready","service":"orders","checks":{"broker":"ok",…}}`.
public struct ReadinessReport: Codable, Sendable, Equatable {
    public var status: String
    public var service: String
    public var checks: [String: String]

    public init(service: String, checks: [String: String]) {
        self.service = service
        self.checks = checks
        status = checks.values.allSatisfy { $0 == "ok" } ? "ready" : "not_ready"
    }

    public var isReady: Bool { status == "ready" }
}
