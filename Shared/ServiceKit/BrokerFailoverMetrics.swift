import Bus

extension ServiceMetrics {
    /// Exports `client`'s failovers and each broker's last probe, read when Prometheus scrapes;
    /// nothing for a bus of one instance (no failover, no probe).
    public func watch(_ client: ServiceClient) {
        guard let failover = client.failover else { return }
        let failovers = deltaCounter(RideMetric.brokerFailovers)
        let up = failover.brokers.map { gauge(RideMetric.brokerUp, labels: [("broker", $0.endpoint)]) }
        onScrape {
            failovers.update(to: UInt64(failover.failovers))
            for (gauge, broker) in zip(up, failover.brokers) { gauge.set(to: broker.answering ? 1.0 : 0.0) }
        }
    }
}
