import Foundation
import ServiceKit
import ServiceLifecycle
import SettingsKit

/// The span collector `ridectl up --traces` runs in its own process, and the variables that point
/// the platform's processes at it.
struct TraceCollection: Sendable {
    let port: Int
    let path: String
    private let running: ListeningApplication
    /// This process's own exporter (the simulation's calls are the apps'), when it traces itself.
    private var exporter: (group: ServiceGroup, task: Task<Void, Never>)?

    /// The OTLP exporter's settings for the children: OTLP/HTTP with JSON to this collector.
    var environment: [String: String] {
        ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(port)", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"]
    }

    /// Starts the collector on `listen` (port 0: a free one) writing to `path`; returns once it
    /// listens, or throws why it cannot.
    static func start(listen: HostPort, path: String) async throws -> TraceCollection {
        let writer = try SpanFileWriter(path: path)
        let collector = SpanCollector(writer: writer, logger: CLILogging.logger)
        let running: ListeningApplication?
        do {
            running = try await ListeningApplication.start { collector.application(listen: listen, onRunning: $0) }
        } catch {
            throw SpanFileError("the span collector cannot listen on \(listen): \(error)")
        }
        guard let running else { throw SpanFileError("the span collector stopped before it listened on \(listen)") }
        return TraceCollection(port: running.port, path: path, running: running)
    }

    /// Traces this process too, into the same collector: the simulation's calls are what the
    /// apps would send, so each of its rides' requests starts a trace (`service.name` ridectl) and
    /// the broker's queue before each op shows.
    mutating func traceThisProcess() {
        for (name, value) in environment { setenv(name, value, 1) }
        guard
            let service = TracingBootstrap.bootstrap(
                program: "ridectl", instance: UUID().uuidString.lowercased(), logger: CLILogging.logger)
        else { return }
        let group = ServiceGroup(services: [service], logger: CLILogging.logger)
        exporter = (group, Task { try? await group.run() })
    }

    /// Stops this process's exporter (it sends what it holds), then the collector.
    func stop() async {
        if let exporter {
            await exporter.group.triggerGracefulShutdown()
            await exporter.task.value
        }
        await running.stop()
    }
}
