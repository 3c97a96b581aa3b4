import Logging
import ServiceLifecycle

/// A service's request side as a `Service` for a `ServiceGroup`: an `MDPWorker` that answers with an
/// `OpRouter`. On graceful shutdown it stops taking requests and finishes the ones in progress.
public struct ServiceWorker: Service {
    public let worker: MDPWorker
    public let router: OpRouter
    private let logger: Logger

    public init(broker: String, router: OpRouter, options: MDPWorker.Options = .init(), logger: Logger) {
        self.worker = MDPWorker(endpoint: broker, service: router.service, options: options, logger: logger)
        self.router = router
        self.logger = logger
    }

    /// Whether the broker has answered this worker lately (`MDPWorker.isRegistered`).
    public var isRegistered: Bool { worker.isRegistered }

    public func run() async throws {
        let (worker, router, logger) = (self.worker, self.router, self.logger)
        try await withGracefulShutdownHandler {
            try await worker.run { body in await router.handle(body, logger: logger) }
        } onGracefulShutdown: {
            worker.stop()
        }
    }
}
