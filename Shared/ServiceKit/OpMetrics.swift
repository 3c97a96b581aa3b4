import Bus

/// `ride_op_duration_seconds` of one service, fed by `OpRouter.onAnswered`.
public struct OpMetrics: Sendable {
    /// What an answer was, by its status.
    public enum Outcome: String, Sendable {
        case ok, refused, error

        public init(status: Int) {
            switch status {
            case ..<400: self = .ok
            case 400..<500: self = .refused
            default: self = .error
            }
        }
    }

    private let service: String
    private let timers: TimerFamily

    public init(service: String, metrics: ServiceMetrics) {
        self.service = service
        self.timers = TimerFamily(RideMetric.opDuration, in: metrics)
    }

    /// Records one answer (the shape of `OpRouter.onAnswered`).
    public func record(op: String, status: Int, elapsed: Duration) {
        timers.record(elapsed, [service, op, Outcome(status: status).rawValue])
    }

    /// Makes `router` time every answer.
    public func timing(_ router: OpRouter) -> OpRouter {
        var router = router
        router.onAnswered = { op, status, elapsed in record(op: op, status: status, elapsed: elapsed) }
        return router
    }
}
