import Logging
import ServiceLifecycle

/// Runs `attempt` until it succeeds: 50 ms after the first failure, doubling to 5 s at most. A
/// graceful shutdown (or cancellation) stops the retries — a restart's catch-up resumes the work.
/// An error `isPermanent` says retrying cannot change (a 4xx: a bug or bad data) is logged and
/// ends the retries. `logger` carries what is being retried in its metadata.
public func retryingWithBackoff(
    _ what: String, logger: Logger, isPermanent: (any Error) -> Bool = { _ in false },
    _ attempt: () async throws -> Void
) async {
    var delay = Duration.milliseconds(50)
    while !Task.isCancelled, !Task.isShuttingDownGracefully {
        do {
            try await attempt()
            return
        } catch  where isPermanent(error) {
            logger.error("\(what) refused; not retried", metadata: ["error": "\(error)"])
            return
        } catch {
            logger.warning("\(what) failed; retrying", metadata: ["error": "\(error)", "in": "\(delay)"])
            let wait = delay
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            delay = min(delay * 2, .seconds(5))
        }
    }
}
