import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The process's Prometheus registry, what refreshes it before a scrape, and the process metrics.
///
/// Counters that a socket loop keeps itself (the broker's, the forwarder's) are copied in on scrape
/// with `DeltaCounter`, so the hot loops never touch a lock for metrics.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    /// swift-metrics over `registry`: a `Timer` is a histogram with `RideMetric.durationBuckets`;
    /// libraries' names are made the ones `RideMetric` declares (`RideMetric.sanitize`).
    public let factory: PrometheusMetricsFactory
    private let refreshers = Mutex<[@Sendable () -> Void]>([])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = RideMetric.durationBuckets
        factory.nameAndLabelSanitizer = RideMetric.sanitize
        self.factory = factory
        addProcessMetrics()
    }

    /// A registry that is also swift-metrics' global backend (libraries' metrics land here too).
    /// Call once per process, from `main`.
    public static func bootstrap() -> ServiceMetrics {
        let metrics = ServiceMetrics()
        MetricsSystem.bootstrap(metrics.factory)
        return metrics
    }

    /// Runs `refresh` before each scrape.
    public func onScrape(_ refresh: @escaping @Sendable () -> Void) {
        refreshers.withLock { $0.append(refresh) }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func render() -> [UInt8] {
        for refresh in refreshers.withLock({ $0 }) { refresh() }
        return registry.emitToBuffer()
    }

    public func counter(_ metric: MetricSpec, labels: [(String, String)] = []) -> Prometheus.Counter {
        registry.makeCounter(descriptor: metric.descriptor, labels: labels)
    }

    public func gauge(_ metric: MetricSpec, labels: [(String, String)] = []) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: metric.descriptor, labels: labels)
    }

    /// A counter fed from a running total kept elsewhere.
    public func deltaCounter(_ metric: MetricSpec, labels: [(String, String)] = []) -> DeltaCounter {
        DeltaCounter(counter(metric, labels: labels))
    }

    /// A swift-metrics timer of `metric`, a histogram with `RideMetric.durationBuckets`.
    public func timer(_ metric: MetricSpec, labels: [(String, String)] = []) -> CoreMetrics.Timer {
        // Made here rather than by the factory, which gives no help text.
        let histogram = registry.makeDurationHistogram(descriptor: metric.descriptor, labels: labels, buckets: RideMetric.durationBuckets)
        return CoreMetrics.Timer(label: metric.name, dimensions: labels, handler: histogram, factory: factory)
    }

    private func addProcessMetrics() {
        let rss = gauge(RideMetric.processMemory)
        let cpu = deltaCounter(RideMetric.processCPU)
        let fds = gauge(RideMetric.processFDs)
        gauge(RideMetric.processStart).set(Date().timeIntervalSince1970)
        onScrape {
            let usage = ProcessUsage.current()
            rss.set(Double(usage.residentBytes))
            cpu.update(toMicroseconds: usage.cpuMicroseconds)
            fds.set(Double(usage.openFileDescriptors))
        }
    }
}

/// Feeds a Prometheus counter from a total that only grows, by adding the difference each time.
public final class DeltaCounter: Sendable {
    private let counter: Prometheus.Counter
    private let last = Mutex<UInt64>(0)

    init(_ counter: Prometheus.Counter) { self.counter = counter }

    public func update(to total: UInt64) {
        let delta = last.withLock { last -> UInt64 in
            defer { last = max(last, total) }
            return total > last ? total - last : 0
        }
        if delta > 0 { counter.increment(by: Int64(delta)) }
    }

    /// For totals kept in microseconds but exported in seconds.
    public func update(toMicroseconds total: UInt64) {
        let delta = last.withLock { last -> UInt64 in
            defer { last = max(last, total) }
            return total > last ? total - last : 0
        }
        if delta > 0 { counter.increment(by: Double(delta) / 1_000_000) }
    }
}

/// What the kernel says about this process (Linux /proc; zeros elsewhere).
public struct ProcessUsage: Sendable {
    public var residentBytes: UInt64
    public var cpuMicroseconds: UInt64
    public var openFileDescriptors: Int

    public static func current() -> ProcessUsage {
        var usage = ProcessUsage(residentBytes: 0, cpuMicroseconds: 0, openFileDescriptors: 0)
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = statm.split(separator: " ")
            if fields.count > 1, let pages = UInt64(fields[1]) {
                usage.residentBytes = pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
            }
        }
        var rusage = rusage()
        #if os(Linux)
        let who = RUSAGE_SELF.rawValue
        #else
        let who = RUSAGE_SELF
        #endif
        if getrusage(who, &rusage) == 0 {
            let user = UInt64(rusage.ru_utime.tv_sec) * 1_000_000 + UInt64(rusage.ru_utime.tv_usec)
            let system = UInt64(rusage.ru_stime.tv_sec) * 1_000_000 + UInt64(rusage.ru_stime.tv_usec)
            usage.cpuMicroseconds = user + system
        }
        usage.openFileDescriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return usage
    }
}

extension CoreMetrics.Timer {
    /// Records `duration` (negative as 0; beyond Int64's nanoseconds as their maximum).
    public func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return recordNanoseconds(Int64(0)) }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        recordNanoseconds(overflow ? Int64.max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }
}

/// Prometheus' metric types under names that do not clash with swift-metrics'.
public typealias PrometheusGauge = Prometheus.Gauge
public typealias PrometheusCounter = Prometheus.Counter

extension MetricSpec {
    /// The catalog's name and help as swift-prometheus takes them: the whole name, no unit appended.
    var descriptor: MetricNameDescriptor { MetricNameDescriptor(metricName: name, unitName: "", helpText: help) }
}
