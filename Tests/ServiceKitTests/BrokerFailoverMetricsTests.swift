import Bus
import Foundation
import Logging
import ServiceKit
import Testing

/// What a process's /metrics says of a bus of two: each broker's last probe and the moves between them.
@Suite(.timeLimit(.minutes(1))) struct BrokerFailoverMetricsTests {
    static let logger = Logger(label: "broker-failover-metrics-test")

    static func value(_ series: String, _ metrics: ServiceMetrics) -> Double? {
        MetricsWiringTests.value(series, in: MetricsWiringTests.scrape(metrics))
    }

    static func up(_ endpoint: String) -> String { "\(RideMetric.brokerUp.name){broker=\"\(endpoint)\"}" }

    @Test func aSilentBrokerShowsAsDownAndTheMoveIsCounted() async throws {
        let (first, second) = (Broker(logger: Self.logger), Broker(logger: Self.logger))
        let a = try await first.start(endpoint: "tcp://127.0.0.1:*")
        let b = try await second.start(endpoint: "tcp://127.0.0.1:*")
        let metrics = ServiceMetrics()
        let client = try await ServiceClient(broker: "\(a),\(b)", logger: Self.logger)
        metrics.watch(client)
        #expect(Self.value(Self.up(a), metrics) == 1 && Self.value(Self.up(b), metrics) == 1)
        #expect(Self.value(RideMetric.brokerFailovers.name, metrics) == 0)

        first.stop()
        await first.join()
        let deadline = ContinuousClock.now + .seconds(20)
        while Self.value(Self.up(a), metrics) != 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(Self.value(Self.up(a), metrics) == 0, "the stopped broker's probe goes unanswered")
        #expect(Self.value(Self.up(b), metrics) == 1)
        #expect(Self.value(RideMetric.brokerFailovers.name, metrics) == 1, "requests moved once, to the broker that answers")
        #expect(client.failover?.activeEndpoint == b)

        await client.close()
        second.stop()
        await second.join()
    }

    @Test func aBusOfOneHasNoBrokerMetrics() async throws {
        let broker = Broker(logger: Self.logger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        let metrics = ServiceMetrics()
        let client = try await ServiceClient(broker: endpoint, logger: Self.logger)
        metrics.watch(client)
        let text = MetricsWiringTests.scrape(metrics)
        #expect(!text.contains(RideMetric.brokerUp.name) && !text.contains(RideMetric.brokerFailovers.name), "\(text)")
        await client.close()
        broker.stop()
        await broker.join()
    }
}
