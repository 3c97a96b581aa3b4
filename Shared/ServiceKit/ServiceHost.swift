import Bus
import Foundation
import Logging
import ServiceLifecycle
import SettingsKit
import Wire

/// The start-up and shutdown every service shares: structured logs and metrics bootstrapped, an
/// instance id, a worker on the broker, and a run of the service's parts beside the status server
/// (/health, /metrics) until SIGINT or SIGTERM, stopping them in reverse. A service's server is
/// then its ops, its reactors and its settings.
public struct ServiceHost: Sendable {
    /// The executable, e.g. `ride-trips`.
    public let program: String
    /// The service's name on the broker, e.g. `trips`.
    public let service: String
    public let logger: Logger
    public let metrics: ServiceMetrics
    public let instance = UUID().uuidString.lowercased()
    public let startedAt = Date()
    /// What `/readyz` checks; the host adds the broker registration of its workers, the server the rest.
    public let readiness = Readiness()
    let http: HostPort
    /// The span exporter, when tracing is on (docs/tracing.md): run first, stopped last.
    let tracing: (any Service)?

    public init(program: String, service: String, http: HostPort, logFormat: LogFormat, logLevel: Logger.Level) {
        self.program = program
        self.service = service
        self.http = http
        let traced = TracingBootstrap.isRequested()
        logger = RideLogging.bootstrap(
            label: program, format: logFormat, level: logLevel, metadataProvider: traced ? TracingBootstrap.logMetadataProvider() : nil)
        metrics = ServiceMetrics.bootstrap()
        metrics.watch(RefusedEvents.shared)
        tracing = traced ? TracingBootstrap.bootstrap(program: program, instance: instance, logger: logger) : nil
        for warning in StartupWarnings.take() { logger.warning("\(warning)") }
    }

    /// The host of `process` (`ride-orders`, named `orders` on the bus), with its settings' status
    /// server and logs.
    public init(_ process: RideProcess, settings: some ServiceSettings) {
        self.init(
            program: process.executable, service: process.rawValue, http: settings.http, logFormat: settings.logFormat,
            logLevel: settings.logLevel)
    }

    /// A worker answering `router`'s ops, `concurrency` requests at a time, timing each (`ride_op_duration_seconds`).
    public func worker(broker: String, router: OpRouter, concurrency: Int) -> ServiceWorker {
        var options = MDPWorker.Options()
        options.concurrency = concurrency
        let router = OpMetrics(service: router.service, metrics: metrics).timing(router)
        let worker = ServiceWorker(broker: broker, router: router, options: options, logger: logger)
        // One check per service the process serves (a tracking shard serves two).
        let name = router.service == service ? "broker" : "broker \(router.service)"
        readiness.add(name) { worker.isRegistered ? nil : "\(router.service) not registered with the broker at \(broker) yet" }
        return worker
    }

    /// A client of the platform's services through `broker`; with a bus of several instances its
    /// failovers and each broker's probe are in /metrics (`ride_broker_failovers_total`, `ride_broker_up`).
    public func client(broker: String, options: MDPClient.Options = .init()) async throws -> ServiceClient {
        let client = try await ServiceClient(broker: broker, options: options, logger: logger)
        metrics.watch(client)
        return client
    }

    /// `/readyz` waits for `subscribers` to reach the bus (a subscriber knows once the bus welcomes it).
    public func needsBus(_ subscribers: [any BusSubscription], at endpoint: String) {
        readiness.add("bus") { subscribers.allSatisfy(\.isConnected) ? nil : "not connected to the bus at \(endpoint) yet" }
    }

    /// This instance's health: up, with `details`.
    public func health(_ details: [String: JSONValue]) -> HealthReport {
        HealthReport(
            status: .ok, service: service, instance: instance, uptimeSeconds: Date().timeIntervalSince(startedAt), details: .object(details)
        )
    }

    /// Runs `parts` (in start order; stopped in reverse) and the status server until a signal
    /// stops the process. `ready` is logged once the status server listens (nil: a part says when
    /// it is ready); a busy address ends the process with exit 69 and a message naming
    /// `addresses` (by default `--http`'s).
    public func run(
        _ parts: [any Service], ready: Logger.Metadata?, addresses: String? = nil, health: @escaping @Sendable () async -> HealthReport
    ) async throws {
        let (logger, http, service) = (self.logger, self.http, self.service)
        let status = StatusServer.make(
            address: http, serviceName: program, metrics: metrics, logger: logger, readiness: readiness, service: service,
            onRunning: { port in
                guard var metadata = ready else { return }
                metadata["http"] = "\(http.host):\(port)"
                logger.info("\(service) ready", metadata: metadata)
            }, health: health)
        do {
            try await ServiceRunner.run((tracing.map { [$0] } ?? []) + parts + [status], logger: logger)
        } catch  where isAddressInUse(error) {
            let addresses = addresses ?? "HTTP address \(http) (--http)"
            throw exitWithError("cannot listen on \(addresses): Address already in use", program: program, code: ExitCodes.unavailable)
        }
    }
}
