import Bus
import Foundation
import Geo
import RideContract
import RideModels
import Storage
import Wire

/// What the orders service keeps: one protocol, a SQLite store (`OrderStore`, the default) and a
/// PostgreSQL one (`PostgresOrderStore`, when `RIDE_DATABASE_URL` is set, shared by instances).
/// Both pass the same storage test suite. Every change commits with its events (the outbox).
public protocol OrderStorage: ReactorCursors, ReportStorage {
    /// The outbox of `order.*` events, for the relay, the `events` op and the reactor's catch-up.
    var eventLog: any EventLog { get }
    /// The keyed requests answered (`requests`), which make every op idempotent for a `request_id`.
    var requestLog: any RequestLog { get }

    /// Stores a new order and its `order.status.NEW` event; `openOrderExists` when the rider has one.
    func create(_ order: Order) async throws
    func order(id: String) async throws -> Order?
    /// The order shared as `shareID` (`orders.share`).
    func order(shareID: String) async throws -> Order?
    /// Changes an order in one transaction: `body` sees the current order and changes it or
    /// throws (nothing is written). The version grows by one; a new status gets its event, and
    /// `sideEvents(before, after)` any others. A change that gives an open order a driver who
    /// has another open order is refused with `driverBusy` (one ride at a time, whatever races).
    func change(
        id: String, now: Date, sideEvents: @escaping @Sendable (Order, Order) -> [OrderSideEvent],
        _ body: @escaping @Sendable (inout Order) throws -> Void
    ) async throws -> (order: Order, previous: OrderStatus)
    /// A rider's orders, newest first.
    func orders(riderID: String, status: OrderStatus?, limit: Int) async throws -> [Order]
    /// A driver's orders — accepted by them or offered to them — newest first.
    func orders(driverID: String, status: OrderStatus?, limit: Int) async throws -> [Order]
    /// `NEW` orders, oldest first (for dispatch rounds).
    func newOrders(limit: Int) async throws -> [Order]
    /// Orders of `status` whose pickup is within `radius` metres of `center`, nearest first; with
    /// `offeredTo`, only those offered to that driver.
    func orders(status: OrderStatus, near center: GeoPoint, radius: Double, offeredTo: String?, limit: Int) async throws -> [Order]
    /// Orders per status, and the open ones most recently changed (the operator's dashboard).
    func stats(openLimit: Int) async throws -> OrderStats
    /// Which of `drivers` have an open order (dispatch offers new orders to the others).
    func driversWithOpenOrders(among drivers: [String]) async throws -> Set<String>

    /// Appends the next message of an order's chat and its `order.message.<order_id>` event, after
    /// `make(order, number)` — which may throw to refuse — builds it from the order as stored now.
    func appendMessage(orderID: String, now: Date, _ make: @escaping @Sendable (Order, Int) throws -> ChatMessage) async throws
        -> ChatMessage
    /// An order's messages after number `after`, oldest first.
    func messages(orderID: String, after: Int, limit: Int) async throws -> [ChatMessage]
    /// A rider's or driver's finished orders (completed or cancelled), newest first, with their payments.
    func history(of caller: Caller, before: HistoryCursor?, limit: Int) async throws -> RideHistory
    /// Records a completed order's payment and its `order.paid` event, once: a second record for
    /// the same order changes nothing and returns the first.
    func recordPayment(_ payment: Payment) async throws -> (payment: Payment, recorded: Bool)
    func payment(orderID: String) async throws -> Payment?
    /// Records that an order's payment was refunded (`reference`, at `time`) with its
    /// `order.refunded` event, once: the driver's earnings and the day's fares no longer count it.
    /// Nil when the order has no payment; a second record changes nothing and returns the first.
    func recordRefund(orderID: String, reference: String, at time: Date) async throws -> (payment: Payment, recorded: Bool)?
    /// A driver's rides, fares and earnings per UTC day from `firstDay` on, newest first.
    func earnings(driverID: String, from firstDay: String) async throws -> [DriverEarnings.Day]
    /// How many `NEW` orders wait within `radius` metres of `center` (surge pricing's demand).
    func waitingOrders(near center: GeoPoint, radius: Double) async throws -> Int
}

extension OrderStorage {
    /// `change` now, with side events or without.
    public func change(
        id: String, sideEvents: @escaping @Sendable (Order, Order) -> [OrderSideEvent] = { _, _ in [] },
        _ body: @escaping @Sendable (inout Order) throws -> Void
    ) async throws -> (order: Order, previous: OrderStatus) {
        try await change(id: id, now: Date(), sideEvents: sideEvents, body)
    }

    /// `appendMessage` now.
    public func appendMessage(orderID: String, _ make: @escaping @Sendable (Order, Int) throws -> ChatMessage) async throws -> ChatMessage {
        try await appendMessage(orderID: orderID, now: Date(), make)
    }
}

public enum OrderStoreFailure: Error, Equatable {
    case openOrderExists(String)
    /// The driver a change would give the order already drives this open order.
    case driverBusy(driver: String, openOrder: String)
    case unknownOrder
}

/// An event other than the status change that goes out with an order's change (same transaction).
public struct OrderSideEvent: Sendable {
    public var kind: EventDescriptor
    /// What completes the kind's topic, when it takes one.
    public var key: String?
    public var data: any Encodable & Sendable

    /// An event of `kind` (`key` completing its topic when the kind takes one).
    public init<Payload: Encodable & Sendable>(_ kind: EventKind<Payload>, key: String? = nil, data: Payload) {
        self.init(kind, key: key, data: data as any Encodable & Sendable)
    }

    /// An event of `kind` whose data is encoded the faster way `EncodedPayload` vouches for.
    public init<Payload>(_ kind: EventKind<Payload>, key: String? = nil, encoded data: some EncodedPayload<Payload> & Sendable) {
        self.init(kind, key: key, data: data as any Encodable & Sendable)
    }

    private init<Payload>(_ kind: EventKind<Payload>, key: String?, data: any Encodable & Sendable) {
        self.kind = kind.descriptor
        self.key = key
        self.data = data
    }

    /// Its topic: the kind's, completed by the key (an internal error when the key does not fit).
    public func topic() throws(ServiceError) -> String { try kind.topic(key: key) }
}

/// Where a history page starts: before this order (creation time, then id).
public struct HistoryCursor: Sendable, Equatable {
    public var createdAtMs: Int64
    public var id: String

    public init(createdAtMs: Int64, id: String) {
        self.createdAtMs = createdAtMs
        self.id = id
    }

    /// `<ms>_<order id>`, opaque to apps.
    public init?(_ text: String) {
        let parts = text.split(separator: "_", maxSplits: 1)
        guard parts.count == 2, let ms = Int64(parts[0]), !parts[1].isEmpty, parts[1].count <= 64 else { return nil }
        self.init(createdAtMs: ms, id: String(parts[1]))
    }

    public var text: String { "\(createdAtMs)_\(id)" }
}

/// What both stores do the same way around their SQL.
enum OrderRows {
    /// A change decided: the order after `body`, its version one up, encoded once (the same
    /// bytes are the stored document and the status event's `order`), and the events that go out
    /// with it. Nil when `body` left the order as it was (nothing to write).
    struct Applied {
        var order: Order
        var document: [UInt8]
        var offersChanged: Bool
        var events: [OrderSideEvent]
    }

    static func apply(
        _ body: (inout Order) throws -> Void, to before: Order, now: Date,
        sideEvents: (Order, Order) -> [OrderSideEvent]
    ) throws -> Applied? {
        var order = before
        try body(&order)
        guard order != before else { return nil }
        order.version = before.version + 1
        order.updatedAt = now
        let document = try JSONCoding.encode(order)
        var events: [OrderSideEvent] = []
        if order.status != before.status {
            events.append(
                OrderSideEvent(
                    Events.orderStatus, key: order.status.rawValue,
                    encoded: EncodedStatusChange(document: document, previousStatus: before.status)))
        }
        events += sideEvents(before, order)
        return Applied(order: order, document: document, offersChanged: order.offeredTo != before.offeredTo, events: events)
    }

    /// The driver a change gives an open order, when it is someone the order did not have: the
    /// one whose other open orders the store must look for before it writes.
    static func newDriver(of applied: Applied, before: Order) -> String? {
        guard applied.order.status.isOpen, let driver = applied.order.driver?.id, driver != before.driver?.id else { return nil }
        return driver
    }

    /// Open statuses in SQL, for both stores' queries.
    static let openStatusSQL = "status NOT IN ('COMPLETED', 'CANCELLED')"

    static func decode(_ document: String) throws -> Order {
        try JSONCoding.decode(Order.self, fromText: document)
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The candidates (from a bounding-box query) within `radius` of `center`, nearest first.
    static func nearest(_ candidates: [Order], to center: GeoPoint, radius: Double, offeredTo driverID: String?, limit: Int) -> [Order] {
        candidates
            .filter { order in driverID.map { order.offeredTo.contains($0) } ?? true }
            .map { ($0, center.distance(to: GeoPoint(latitude: $0.pickup.latitude, longitude: $0.pickup.longitude))) }
            .filter { $0.1 <= radius }
            .sorted { $0.1 < $1.1 }
            .prefix(limit)
            .map(\.0)
    }

    /// How many pickups (from a bounding-box query) lie within `radius` of `center`.
    static func within(_ pickups: [(Double, Double)], of center: GeoPoint, radius: Double) -> Int {
        pickups.filter { center.distance(to: GeoPoint(latitude: $0.0, longitude: $0.1)) <= radius }.count
    }

    /// A history page from rows (created_at_ms, id, order document, payment document) fetched with `limit + 1`.
    static func historyPage(_ rows: [(Int64, String, String, String?)], limit: Int) throws -> RideHistory {
        let rides = try rows.prefix(limit).map { row in
            HistoryRide(order: try decode(row.2), payment: try row.3.map { try JSONCoding.decode(Payment.self, fromText: $0) })
        }
        let next = rows.count > limit ? rows[limit - 1] : nil
        return RideHistory(rides: rides, nextBefore: next.map { HistoryCursor(createdAtMs: $0.0, id: $0.1).text })
    }
}
