import Hummingbird
import ServiceKit
import ServiceLifecycle

/// A local HTTP server of ridectl's (the span collector, the fake Stripe) run in a service group of
/// its own, so that stopping it is a graceful shutdown, not a cancellation.
struct ListeningApplication: Sendable {
    let port: Int
    let group: ServiceGroup
    let task: Task<Void, Never>

    /// Runs the application `make` builds (handing it the callback that says its port) and returns
    /// once it listens; throws why it could not (nil: it stopped before it listened).
    static func start(_ make: (@escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol) async throws -> ListeningApplication? {
        let (started, continuation) = AsyncStream<Result<Int, any Error>>.makeStream()
        let app = make { port in continuation.yield(.success(port)) }
        let group = ServiceGroup(services: [app], logger: CLILogging.logger)
        let task = Task {
            do {
                try await group.run()
            } catch {
                continuation.yield(.failure(error))
            }
            continuation.finish()
        }
        var iterator = started.makeAsyncIterator()
        guard let first = await iterator.next() else { return nil }
        return ListeningApplication(port: try first.get(), group: group, task: task)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        await task.value
    }
}
