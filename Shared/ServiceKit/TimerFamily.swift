import CoreMetrics
import Synchronization

/// The swift-metrics timers of one histogram metric, one per set of label values, each made on
/// first use and kept: a lookup under a lock per record, no registry lookup after the first.
/// Callers keep the label values bounded (an op the router knows, a transition between statuses).
public final class TimerFamily: Sendable {
    private let metric: MetricSpec
    private let metrics: ServiceMetrics
    private let timers = Mutex<[[String]: CoreMetrics.Timer]>([:])

    public init(_ metric: MetricSpec, in metrics: ServiceMetrics) {
        self.metric = metric
        self.metrics = metrics
    }

    /// Records `duration` under `values`, one per label of the metric, in its order.
    public func record(_ duration: Duration, _ values: [String]) {
        timer(values).record(duration)
    }

    /// Makes the series of `values` now (exported empty until something is recorded).
    public func prepare(_ values: [String]) { _ = timer(values) }

    private func timer(_ values: [String]) -> CoreMetrics.Timer {
        timers.withLock { timers in
            if let timer = timers[values] { return timer }
            let timer = metrics.timer(metric, labels: Array(zip(metric.labels, values)))
            timers[values] = timer
            return timer
        }
    }
}
