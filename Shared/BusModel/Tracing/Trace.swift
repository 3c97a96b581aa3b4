import Synchronization
import Tracing

/// The platform's use of swift-distributed-tracing: whether this process records spans, the
/// span helper every layer uses, and the bridge between `TraceHeaders` and a `ServiceContext`.
///
/// Off by default, and then free: `span` runs its body with a nil span after one relaxed atomic
/// load (no task-local, no attributes built), and `currentHeaders` is nil, so nothing extra goes
/// on the wire. ServiceKit turns it on after bootstrapping an exporter (OTEL_EXPORTER_OTLP_ENDPOINT).
/// A process with tracing off therefore does not pass an incoming trace on: the processes after
/// it start traces of their own (docs/tracing.md).
public enum Trace {
    private static let enabled = Atomic<Bool>(false)

    /// Whether spans are recorded and trace context is sent on.
    public static var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    /// Turns tracing on; call once, after `InstrumentationSystem.bootstrap`.
    public static func enable() { enabled.store(true, ordering: .relaxed) }

    /// The current task's trace context, to send with a message; nil when tracing is off or no span is active.
    public static var currentHeaders: TraceHeaders? {
        guard isEnabled, let context = ServiceContext.current else { return nil }
        return headers(of: context)
    }

    /// `context` as W3C headers, through the bootstrapped instrument's propagator.
    public static func headers(of context: ServiceContext) -> TraceHeaders? {
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: DictionaryInjector())
        return TraceHeaders(traceparent: carrier["traceparent"], tracestate: carrier["tracestate"])
    }

    /// The context a span continuing `headers` is started in.
    public static func context(continuing headers: TraceHeaders) -> ServiceContext {
        var context = ServiceContext.topLevel
        let carrier = ["traceparent": headers.traceparent, "tracestate": headers.tracestate].compactMapValues { $0 }
        InstrumentationSystem.instrument.extract(carrier, into: &context, using: DictionaryExtractor())
        return context
    }

    /// Runs `body` in a span named `name`, a child of `parent` when given (the context a message
    /// from another process carried), else of the current task's span (a new trace when none).
    /// With tracing off `body` gets nil and nothing else happens (`parent` is not even read); set attributes through the
    /// optional span, so they are not even built then.
    public static func span<T>(
        _ name: @autoclosure () -> String, kind: SpanKind, parent: @autoclosure () -> TraceHeaders? = nil,
        isolation: isolated (any Actor)? = #isolation,
        function: String = #function, file fileID: String = #fileID, line: UInt = #line,
        _ body: (_ span: (any Span)?) async throws -> T
    ) async rethrows -> T {
        guard isEnabled else { return try await body(nil) }
        let context = parent().map(context(continuing:)) ?? ServiceContext.current ?? .topLevel
        return try await withSpan(
            name(), context: context, ofKind: kind, isolation: isolation, function: function, file: fileID, line: line
        ) { span in
            try await body(span)
        }
    }
}

extension Trace {
    /// `span` for synchronous work (the outbox relay's sends run inside a database call).
    public static func syncSpan<T>(
        _ name: @autoclosure () -> String, kind: SpanKind, parent: @autoclosure () -> TraceHeaders? = nil,
        function: String = #function, file fileID: String = #fileID, line: UInt = #line,
        _ body: (_ span: (any Span)?) throws -> T
    ) rethrows -> T {
        guard isEnabled else { return try body(nil) }
        let context = parent().map(context(continuing:)) ?? ServiceContext.current ?? .topLevel
        return try withSpan(name(), context: context, ofKind: kind, function: function, file: fileID, line: line) { span in try body(span) }
    }
}

/// Writes a propagator's fields into a `[String: String]` (header names are lowercase in W3C's).
struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key.lowercased()] = value }
}

/// Reads a propagator's fields from a `[String: String]`.
struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key.lowercased()] }
}

extension Span {
    /// Sets `key` when there is a value (attributes "wherever known").
    public func set(_ key: String, _ value: String?) {
        if let value { attributes[key] = value }
    }

    /// The rpc attributes of a 7/MDP call or op span.
    public func setRPC(service: String, method: String) {
        attributes["rpc.system"] = "mdp"
        attributes["rpc.service"] = service
        attributes["rpc.method"] = method
    }
}
