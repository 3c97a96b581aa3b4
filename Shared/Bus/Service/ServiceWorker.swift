import Logging
import ServiceLifecycle

/// A service's request side as a `Service` for a `ServiceGroup`: an `MDPWorker` that answers with an
/// `OpRouter` — one per broker when the bus has several instances (`BusAddress`), so that either
/// broker reaches the service while the other is gone. On graceful shutdown it stops taking
/// requests and finishes the ones in progress.
public struct ServiceWorker: Service {
    /// One per broker, in the order the bus address names them.
    public let workers: [MDPWorker]
    public let router: OpRouter
    private let logger: Logger

    /// `broker`: one endpoint, or several separated by commas.
    public init(broker: String, router: OpRouter, options: MDPWorker.Options = .init(), logger: Logger) {
        let endpoints = BusAddress.endpoints(broker)
        self.workers = (endpoints.isEmpty ? [broker] : endpoints).map {
            MDPWorker(endpoint: $0, service: router.service, options: options, logger: logger)
        }
        self.router = router
        self.logger = logger
    }

    /// Whether a broker has answered this worker lately (`MDPWorker.isRegistered`): one is enough
    /// to be reached.
    public var isRegistered: Bool { workers.contains { $0.isRegistered } }

    /// Requests answered so far, through every broker.
    public var handledCount: UInt64 { workers.reduce(0) { $0 + $1.handledCount } }

    public func run() async throws {
        let (workers, router, logger) = (self.workers, self.router, self.logger)
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                for worker in workers {
                    group.addTask { try await worker.run { body in await router.handle(body, logger: logger) } }
                }
            }
        } onGracefulShutdown: {
            for worker in workers { worker.stop() }
        }
    }
}
