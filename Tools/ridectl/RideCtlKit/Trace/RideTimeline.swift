import Foundation
import Wire

/// A ride's timeline across processes, what `ridectl trace ORDER_ID` prints: one step per status
/// change (and per other `order.*` / `trip.*` event), oldest first.
@WireKeys
public struct RideTimeline: Codable, Sendable, Equatable {
    public enum Origin: String, Codable, Sendable {
        /// Built from exported spans: each step has its hops.
        case spans
        /// Built from the services' event history: times and gaps only.
        case events
    }

    public var orderID: String
    public var origin: Origin
    /// The traces the steps come from (spans only).
    public var traces: [String]
    public var steps: [TimelineStep]

    public init(orderID: String, origin: Origin, traces: [String] = [], steps: [TimelineStep]) {
        self.orderID = orderID
        self.origin = origin
        self.traces = traces
        self.steps = steps
    }

    /// The step whose hop took longest, with the hop's name: where to look first.
    public var slowestHop: (step: TimelineStep, hop: String, milliseconds: Double)? {
        var best: (step: TimelineStep, hop: String, milliseconds: Double)?
        for step in steps {
            for (name, value) in step.hops?.named ?? [] where value > (best?.milliseconds ?? -1) {
                best = (step, name, value)
            }
        }
        return best
    }
}

@WireKeys
public struct TimelineStep: Codable, Sendable, Equatable {
    /// When it happened: the step's database commit (else its event's publication); an event's time.
    public var time: Date
    /// The status the order changed to, else the event type (`trip.created`, `order.offered`).
    public var label: String
    public var status: String?
    public var eventType: String?
    /// The process that caused it: `service.name` of its span (`ride-orders`), or the event's source.
    public var service: String
    /// What it was doing: `op orders.accept ← ride-gateway POST /v1/orders/{id}/accept`,
    /// `react orders order.status ← ride-orders`, or the event's `source#sequence`.
    public var cause: String?
    public var traceID: String?
    /// Seconds since the step before (nil for the first).
    @WireKey("since_previous_s") public var sincePrevious: Double?
    /// Consecutive steps of the same event type shown as one (`trip.eta` × 12); 1 otherwise.
    public var count: Int
    public var hops: Hops?

    public init(
        time: Date, label: String, status: String? = nil, eventType: String? = nil, service: String, cause: String? = nil,
        traceID: String? = nil,
        sincePrevious: Double? = nil, count: Int = 1, hops: Hops? = nil
    ) {
        self.time = time
        self.label = label
        self.status = status
        self.eventType = eventType
        self.service = service
        self.cause = cause
        self.traceID = traceID
        self.sincePrevious = sincePrevious
        self.count = count
        self.hops = hops
    }
}

/// Where the time of one step went, in milliseconds; nil when the spans do not show it.
@WireKeys
public struct Hops: Codable, Sendable, Equatable {
    /// The event on the bus: its `publish` span's start → the reactor's `react` span's start.
    @WireKey("bus_ms") public var bus: Double?
    /// Waiting in the broker for a worker: the client's `call` span's start → the `op` span's start.
    @WireKey("broker_queue_ms") public var brokerQueue: Double?
    /// The handler's own time: its `op`/`react` span's duration minus its children's.
    @WireKey("handler_ms") public var handler: Double?
    /// The `db.commit` spans under the handler, together.
    @WireKey("database_commit_ms") public var databaseCommit: Double?
    /// In the outbox: the last commit's end → the relay's `publish` span's start.
    @WireKey("outbox_ms") public var outbox: Double?
    /// From the step's origin (the call or the event) to its event being published.
    @WireKey("total_ms") public var total: Double?

    public init(
        bus: Double? = nil, brokerQueue: Double? = nil, handler: Double? = nil, databaseCommit: Double? = nil, outbox: Double? = nil,
        total: Double? = nil
    ) {
        self.bus = bus
        self.brokerQueue = brokerQueue
        self.handler = handler
        self.databaseCommit = databaseCommit
        self.outbox = outbox
        self.total = total
    }

    /// The five hops by the names the table uses (the total is not a hop).
    public var named: [(String, Double)] {
        [("bus", bus), ("broker queue", brokerQueue), ("handler", handler), ("database commit", databaseCommit), ("outbox", outbox)]
            .compactMap { name, value in
                value.map { (name, $0) }
            }
    }
}
