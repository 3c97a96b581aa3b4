import Bus
import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Tracing's start-up (docs/tracing.md): with `OTEL_EXPORTER_OTLP_ENDPOINT` (or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, swift-otel's tracer is bootstrapped, exporting spans
/// over OTLP/HTTP (protobuf, or JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`; the other
/// OTEL_* variables apply too), and `Trace` is switched on. Without it nothing is bootstrapped:
/// swift-distributed-tracing's no-op tracer stays, and `Trace` keeps every span path a no-op.
public enum TracingBootstrap {
    /// Whether the environment asks for spans to be exported.
    public static func isRequested(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].contains { !(environment[$0] ?? "").isEmpty }
    }

    /// What the platform's JSON and text log lines gain while tracing: `trace_id`, `span_id` and
    /// `trace_flags` of the span current where the line is logged.
    public static func logMetadataProvider() -> Logger.MetadataProvider { OTel.makeLoggingMetadataProvider() }

    /// Bootstraps the tracer (once per process) and returns the exporter's service, to run first
    /// and stop last; nil when tracing was not asked for or cannot start (said in the log, never fatal).
    /// Resource: `service.name` = `program` (unless OTEL_SERVICE_NAME says otherwise),
    /// `service.instance.id` = `instance`.
    public static func bootstrap(program: String, instance: String, logger: Logger) -> (any Service)? {
        guard isRequested() else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = program
        configuration.resourceAttributes = ["service.instance.id": instance]
        // An unreachable collector makes the exporter complain at every batch: one line a minute is enough.
        var diagnostic = logger
        diagnostic.handler = RateLimitedLogHandler(wrapping: logger.handler, interval: .seconds(60))
        configuration.diagnosticLogger = .custom(diagnostic)
        configuration.diagnosticLogLevel = .warning
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        do {
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            Trace.enable()
            logger.info("tracing on: spans are exported over OTLP", metadata: ["service.instance.id": "\(instance)"])
            return backend.service
        } catch {
            logger.warning("tracing not started", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
