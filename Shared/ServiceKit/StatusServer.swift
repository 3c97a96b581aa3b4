import Bus
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SettingsKit
import Wire

/// `ok`: serving. `degraded`: serving, but something it needs is missing (reported in `details`).
/// `down`: not serving; `/health` answers 503.
public enum HealthStatus: String, Codable, Sendable {
    case ok, degraded, down
}

/// The body of `/health`.
@WireKeys
public struct HealthReport: Codable, Sendable {
    public var status: HealthStatus
    public var service: String
    public var instance: String
    public var pid: Int32
    public var uptimeSeconds: Double
    public var details: JSONValue

    public init(status: HealthStatus, service: String, instance: String, uptimeSeconds: Double, details: JSONValue) {
        self.status = status
        self.service = service
        self.instance = instance
        self.pid = ProcessInfo.processInfo.processIdentifier
        self.uptimeSeconds = (uptimeSeconds * 1000).rounded() / 1000
        self.details = details
    }
}

/// Every executable's HTTP side door: `GET /health` (JSON, 200 or 503), `GET /livez` (200 while
/// the process runs), `GET /readyz` (200 once everything `readiness` checks is in place, else 503
/// naming what is not) and `GET /metrics` (Prometheus text). A Hummingbird application, run as a
/// `Service` in the process's group.
public enum StatusServer {
    public static func make(
        address: HostPort, serviceName: String, metrics: ServiceMetrics, logger: Logger,
        readiness: Readiness = Readiness(), service: String? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        health: @escaping @Sendable () async -> HealthReport
    ) -> some Service {
        let router = Router()
        router.get("health") { _, _ -> Response in
            let report = await health()
            return json(report, status: report.status == .down ? .serviceUnavailable : .ok)
        }
        router.get("livez") { _, _ -> Response in
            json(["status": "live"], status: .ok)
        }
        router.get("readyz") { _, _ -> Response in
            let report = await readiness.report(service: service ?? serviceName)
            return json(report, status: report.isReady ? .ok : .serviceUnavailable)
        }
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.render())))
        }
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        return Application(
            router: router,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: serviceName),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? address.port) },
            logger: quiet)
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status) -> Response {
        let body = (try? JSONCoding.encoder(pretty: false).encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
