import ArgumentParser
import Bus
import Foundation
import Logging
import RideContract
import ServiceKit
import Synchronization
import Wire
import ZeroMQ

/// The running bus: binds every socket first (so a taken port fails at once, with one clear line),
/// then serves until SIGINT/SIGTERM.
public struct BusServer: Sendable {
    public let settings: BusSettings

    public init(settings: BusSettings) { self.settings = settings }

    public func run() async throws {
        let host = ServiceHost(.bus, settings: settings)
        let logger = host.logger
        // A secured bus knows each peer's key, so it holds each to its role; a plain one cannot.
        let policy = Context.shared.curve == nil ? nil : Roles.policy
        var brokerConfiguration = settings.brokerConfiguration
        brokerConfiguration.policy = policy
        let forwarder = EventForwarder(policy: policy, batches: settings.eventBatches, logger: logger)
        let broker = Broker(configuration: brokerConfiguration, logger: logger)
        do {
            _ = try await forwarder.start(ingress: settings.ingress, egress: settings.egress, highWaterMark: settings.highWaterMark)
            _ = try await broker.start(endpoints: settings.broker)
        } catch {
            forwarder.stop()
            throw exitWithError(bindFailure(error), program: "ride-bus", code: ExitCodes.unavailable)
        }
        BusMetrics(metrics: host.metrics, forwarder: forwarder, broker: broker).register()
        let loops = ShutdownHook {
            logger.info("bus stopping")
            forwarder.stop()
            broker.stop()
            await forwarder.join()
            await broker.join()
        }
        let ready: Logger.Metadata = [
            "ingress": "\(settings.ingress.joined(separator: ","))", "egress": "\(settings.egress.joined(separator: ","))",
            "broker": "\(settings.broker.joined(separator: ","))", "libzmq": "\(Context.libraryVersion)",
            "roles":
                "\(policy.map { "enforced: \($0.roles.keys.sorted().joined(separator: ","))" } ?? "none (no CURVE: every peer may do everything)")",
        ]
        try await host.run([loops], ready: ready) { [settings] in
            host.health(Self.details(forwarder: forwarder, broker: broker, settings: settings))
        }
        logger.info("bus stopped")
    }

    /// "cannot bind event ingress (--pub) to tcp://*:5555: Address already in use".
    func bindFailure(_ error: any Error) -> String {
        guard let zmqError = error as? ZMQError else { return "\(error)" }
        let endpoint = zmqError.operation.components(separatedBy: " to ").last ?? ""
        let roles = [
            (settings.ingress, "event ingress (--pub)"), (settings.egress, "event egress (--sub)"), (settings.broker, "broker (--broker)"),
        ]
        let role = roles.first { $0.0.contains(endpoint) }?.1 ?? "socket"
        return "cannot bind \(role) to \(endpoint): \(zmqError.message)"
    }

    static func details(forwarder: EventForwarder, broker: Broker, settings: BusSettings) -> [String: JSONValue] {
        let events = forwarder.stats
        let requests = broker.stats
        var services: [String: JSONValue] = [:]
        for (name, service) in requests.services {
            services[name] = [
                "workers": .number(Double(service.workers)), "idle": .number(Double(service.idle)),
                "queued": .number(Double(service.queued)), "requests": .number(Double(service.requests)),
            ]
        }
        return [
            "endpoints": [
                "ingress": .array(settings.ingress.map(JSONValue.string)), "egress": .array(settings.egress.map(JSONValue.string)),
                "broker": .array(settings.broker.map(JSONValue.string)),
            ],
            "events": [
                "forwarded": .number(Double(events.forwarded)), "subscription_messages": .number(Double(events.subscriptions)),
                "rejected": .number(Double(events.rejected)), "batches": .number(Double(events.batches)),
                "malformed_batches": .number(Double(events.malformedBatches)),
            ],
            "requests": [
                "received": .number(Double(requests.requests)), "packed": .number(Double(requests.packed)),
                "replied": .number(Double(requests.replies)),
                "malformed": .number(Double(requests.malformed)), "rejected": .number(Double(requests.rejected)),
                "expired_workers": .number(Double(requests.expiredWorkers)), "requeued": .number(Double(requests.requeued)),
            ],
            "denied": .object(
                Dictionary(
                    events.refused.merging(requests.refused, uniquingKeysWith: +).map {
                        ("\($0.key.action) \($0.key.role)", JSONValue.number(Double($0.value)))
                    },
                    uniquingKeysWith: { first, _ in first })),
            "services": .object(services),
        ]
    }
}

/// The bus's Prometheus metrics, copied from the loops' own counters on each scrape.
struct BusMetrics: Sendable {
    let metrics: ServiceMetrics
    let forwarder: EventForwarder
    let broker: Broker

    func register() {
        let forwarded = metrics.deltaCounter(RideMetric.eventsForwarded)
        let subscriptions = metrics.deltaCounter(RideMetric.subscriptionMessages)
        let rejectedEgress = metrics.deltaCounter(RideMetric.rejectedMessages, labels: [("socket", "egress")])
        let rejectedIngress = metrics.deltaCounter(RideMetric.rejectedMessages, labels: [("socket", "ingress")])
        let rejectedBroker = metrics.deltaCounter(RideMetric.rejectedMessages, labels: [("socket", "broker")])
        let requests = metrics.deltaCounter(RideMetric.busRequests)
        let packed = metrics.deltaCounter(RideMetric.busPacked)
        let batches = metrics.deltaCounter(RideMetric.eventBatches)
        let replies = metrics.deltaCounter(RideMetric.busReplies)
        let refused = metrics.deltaCounter(RideMetric.busRefused)
        let expired = metrics.deltaCounter(RideMetric.expiredWorkers)
        let requeued = metrics.deltaCounter(RideMetric.requeued)
        let perService = Mutex<[String: (requests: DeltaCounter, workers: PrometheusGauge, queued: PrometheusGauge)]>([:])
        let denied = Mutex<[RefusalCount: DeltaCounter]>([:])
        let metrics = self.metrics
        let (forwarder, broker) = (self.forwarder, self.broker)
        metrics.onScrape {
            let events = forwarder.stats
            forwarded.update(to: events.forwarded)
            subscriptions.update(to: events.subscriptions)
            rejectedEgress.update(to: events.rejected)
            rejectedIngress.update(to: events.malformedBatches)
            batches.update(to: events.batches)
            let stats = broker.stats
            rejectedBroker.update(to: stats.malformed)
            requests.update(to: stats.requests)
            packed.update(to: stats.packed)
            replies.update(to: stats.replies)
            refused.update(to: stats.rejected)
            expired.update(to: stats.expiredWorkers)
            requeued.update(to: stats.requeued)
            denied.withLock { known in
                for (key, count) in events.refused.merging(stats.refused, uniquingKeysWith: +) {
                    if known[key] == nil {
                        known[key] = metrics.deltaCounter(RideMetric.denied, labels: [("action", key.action), ("role", key.role)])
                    }
                    known[key]!.update(to: count)
                }
            }
            perService.withLock { known in
                for (name, service) in stats.services {
                    if known[name] == nil {
                        let labels = [("service", name)]
                        known[name] = (
                            metrics.deltaCounter(RideMetric.serviceRequests, labels: labels),
                            metrics.gauge(RideMetric.workers, labels: labels),
                            metrics.gauge(RideMetric.queued, labels: labels)
                        )
                    }
                    known[name]!.requests.update(to: service.requests)
                    known[name]!.workers.set(Double(service.workers))
                    known[name]!.queued.set(Double(service.queued))
                }
            }
        }
    }
}
