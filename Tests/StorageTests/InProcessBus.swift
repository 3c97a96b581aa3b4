import Bus
import Testing

/// A broker on loopback, workers answering the ops of `routers`, and a client of it: the other
/// services a reaction calls, as its test scripts them.
final class InProcessBus: Sendable {
    let client: ServiceClient
    private let broker: Broker
    private let workers: [ServiceWorker]
    private let running: [Task<Void, any Error>]

    private init(broker: Broker, workers: [ServiceWorker], client: ServiceClient) {
        (self.broker, self.workers, self.client) = (broker, workers, client)
        running = workers.map { worker in Task { try await worker.run() } }
    }

    static func start(_ routers: [OpRouter]) async throws -> InProcessBus {
        let broker = Broker(logger: testLogger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        let workers = routers.map { ServiceWorker(broker: endpoint, router: $0, logger: testLogger) }
        let bus = InProcessBus(broker: broker, workers: workers, client: try await ServiceClient(broker: endpoint, logger: testLogger))
        #expect(await eventually { workers.allSatisfy(\.isRegistered) })
        return bus
    }

    func close() async {
        for worker in workers.flatMap(\.workers) { worker.stop() }
        for task in running { _ = await task.result }
        await client.close()
        broker.stop()
        await broker.join()
    }
}
