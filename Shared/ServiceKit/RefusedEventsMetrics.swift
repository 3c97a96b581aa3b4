import Bus

extension ServiceMetrics {
    /// Exports `refusals` per reason (`ride_events_refused_total`), read when Prometheus scrapes.
    public func watch(_ refusals: RefusedEvents) {
        let counters = RefusedEvents.Reason.allCases.map {
            (reason: $0, counter: deltaCounter(RideMetric.eventsRefused, labels: [("reason", $0.rawValue)]))
        }
        onScrape {
            for (reason, counter) in counters { counter.update(to: refusals.total(reason)) }
        }
    }
}
