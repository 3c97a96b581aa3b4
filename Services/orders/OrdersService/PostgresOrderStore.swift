import Bus
import Foundation
import Geo
import Logging
import PostgresNIO
import RideContract
import RideModels
import Storage
import Wire

/// Orders in the `orders` schema of a shared PostgreSQL database: what several `ride-orders`
/// instances use together. Same tables (the SQLite migrations, translated) and rules as
/// `OrderStore`. Where SQLite's single writer made a read-then-write safe, this store locks the
/// order's row (`SELECT … FOR UPDATE`) for the transaction, so two instances changing one order
/// queue there and the second sees the first's result; uniqueness (one open order per rider, one
/// payment per order) is the database's constraints.
public final class PostgresOrderStore: OrderStorage, PostgresServiceStore, PostgresReactorCursors {
    public let postgres: PostgresSchema

    public static let defaultSchema = "orders"
    public static let keepsOutbox = true
    public static let migrations = PostgresSchema.translated(OrderStore.migrations)

    public init(postgres: PostgresSchema) {
        self.postgres = postgres
    }

    /// For the store's extensions (reports).
    var storeLogger: Logger { logger }

    private static let open = OrderRows.openStatusSQL

    public func create(_ order: Order) async throws {
        let logger = logger
        try await postgres.write { connection in
            let document = try JSONCoding.encode(order)
            // The partial unique index (one open order per rider) decides a race between instances.
            let inserted = try await connection.run(
                """
                INSERT INTO orders (id, status, rider_id, driver_id, version, pickup_latitude, pickup_longitude, created_at_ms, document)
                VALUES (\(order.id), \(order.status.rawValue), \(order.rider.id), \(order.driver?.id), \(order.version), \(order.pickup.latitude),
                        \(order.pickup.longitude), \(OrderRows.milliseconds(order.createdAt)), \(String(decoding: document, as: UTF8.self)))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            guard inserted == 1 else {
                let open = try await connection.first(
                    "SELECT id FROM orders WHERE rider_id = \(order.rider.id) AND \(unescaped: Self.open)",
                    as: String.self, logger: logger)
                throw OrderStoreFailure.openOrderExists(open ?? order.id)
            }
            try await Self.replaceOffers(connection, order, logger: logger)
            try await PostgresOutbox.append(
                connection, Events.orderStatus, key: order.status.rawValue,
                encoded: EncodedStatusChange(document: document, previousStatus: nil), time: order.updatedAt, logger: logger)
        }
    }

    public func order(id: String) async throws -> Order? {
        let logger = logger
        return try await postgres.read { connection in try await Self.fetch(connection, id: id, lock: false, logger: logger) }
    }

    public func order(shareID: String) async throws -> Order? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first("SELECT document FROM orders WHERE share_id = \(shareID)", as: String.self, logger: logger).map(
                OrderRows.decode)
        }
    }

    private static func fetch(_ connection: PostgresConnection, id: String, lock: Bool, logger: Logger) async throws -> Order? {
        try await connection.first(
            "SELECT document FROM orders WHERE id = \(id)\(unescaped: lock ? " FOR UPDATE" : "")", as: String.self, logger: logger
        )
        .map(OrderRows.decode)
    }

    public func change(
        id: String, now: Date, sideEvents: @escaping @Sendable (Order, Order) -> [OrderSideEvent],
        _ body: @escaping @Sendable (inout Order) throws -> Void
    ) async throws -> (order: Order, previous: OrderStatus) {
        let logger = logger
        return try await postgres.write { connection in
            guard let order = try await Self.fetch(connection, id: id, lock: true, logger: logger) else {
                throw OrderStoreFailure.unknownOrder
            }
            guard let applied = try OrderRows.apply(body, to: order, now: now, sideEvents: sideEvents) else { return (order, order.status) }
            if let driver = OrderRows.newDriver(of: applied, before: order) {
                // Two instances may give one driver two orders at once: the driver's lock (held to
                // the commit, taken after the order's row, so always in that order) puts the second
                // after the first, and it finds the first's order open.
                try await connection.run("SELECT pg_advisory_xact_lock(hashtext(\(driver)))", logger: logger)
                if let open = try await connection.first(
                    """
                    SELECT id FROM orders WHERE driver_id = \(driver) AND \(unescaped: Self.open) AND id <> \(id) LIMIT 1
                    """, as: String.self, logger: logger)
                {
                    throw OrderStoreFailure.driverBusy(driver: driver, openOrder: open)
                }
            }
            try await connection.run(
                """
                UPDATE orders SET status = \(applied.order.status.rawValue), driver_id = \(applied.order.driver?.id), share_id = \(applied.order.shareID),
                    version = \(applied.order.version),
                    document = \(String(decoding: applied.document, as: UTF8.self)) WHERE id = \(id)
                """, logger: logger)
            if applied.offersChanged { try await Self.replaceOffers(connection, applied.order, logger: logger) }
            for event in applied.events {
                try await PostgresOutbox.append(
                    connection, topic: event.topic(), type: event.kind.type, data: event.data, time: now, logger: logger)
            }
            return (applied.order, order.status)
        }
    }

    private static func replaceOffers(_ connection: PostgresConnection, _ order: Order, logger: Logger) async throws {
        try await connection.run("DELETE FROM offers WHERE order_id = \(order.id)", logger: logger)
        for driver in order.offeredTo {
            try await connection.run(
                "INSERT INTO offers (order_id, driver_id) VALUES (\(order.id), \(driver)) ON CONFLICT DO NOTHING", logger: logger)
        }
    }

    private func documents(_ query: PostgresQuery) async throws -> [Order] {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.all(query, as: String.self, logger: logger).map(OrderRows.decode)
        }
    }

    public func orders(riderID: String, status: OrderStatus?, limit: Int) async throws -> [Order] {
        try await documents(
            status.map { status in
                "SELECT document FROM orders WHERE rider_id = \(riderID) AND status = \(status.rawValue) ORDER BY created_at_ms DESC LIMIT \(limit)"
            } ?? "SELECT document FROM orders WHERE rider_id = \(riderID) ORDER BY created_at_ms DESC LIMIT \(limit)")
    }

    public func orders(driverID: String, status: OrderStatus?, limit: Int) async throws -> [Order] {
        try await documents(
            """
            SELECT document FROM orders
            WHERE (driver_id = \(driverID) OR id IN (SELECT order_id FROM offers WHERE driver_id = \(driverID))) AND (\(status == nil) OR status = \(status?.rawValue ?? ""))
            ORDER BY created_at_ms DESC LIMIT \(limit)
            """)
    }

    public func newOrders(limit: Int) async throws -> [Order] {
        try await documents("SELECT document FROM orders WHERE status = 'NEW' ORDER BY created_at_ms LIMIT \(limit)")
    }

    public func orders(status: OrderStatus, near center: GeoPoint, radius: Double, offeredTo: String?, limit: Int) async throws -> [Order] {
        let box = BoundingBox(around: center, radius: radius)
        let candidates = try await documents(
            """
            SELECT document FROM orders WHERE status = \(status.rawValue) AND pickup_latitude BETWEEN \(box.south) AND \(box.north)
              AND pickup_longitude BETWEEN \(box.west) AND \(box.east) LIMIT 5000
            """)
        return OrderRows.nearest(candidates, to: center, radius: radius, offeredTo: offeredTo, limit: limit)
    }

    public func driversWithOpenOrders(among drivers: [String]) async throws -> Set<String> {
        guard !drivers.isEmpty else { return [] }
        let logger = logger
        return try await postgres.read { connection in
            Set(
                try await connection.all(
                    "SELECT DISTINCT driver_id FROM orders WHERE driver_id = ANY(\(drivers)) AND \(unescaped: Self.open)",
                    as: String.self, logger: logger))
        }
    }

    public func stats(openLimit: Int) async throws -> OrderStats {
        let logger = logger
        let byStatus = try await postgres.read { connection in
            try await connection.all("SELECT status, COUNT(*) FROM orders GROUP BY status", as: (String, Int).self, logger: logger)
        }
        let open = try await documents(
            "SELECT document FROM orders WHERE \(unescaped: Self.open) ORDER BY created_at_ms DESC LIMIT \(openLimit)")
        let noDriver = try await postgres.read { connection in
            try await connection.first(
                "SELECT COUNT(*) FROM orders WHERE status = \(OrderStatus.cancelled.rawValue) AND document LIKE \(OrderStats.noDriverFoundPattern)",
                as: Int.self,
                logger: logger)
        }
        return OrderStats(
            byStatus: Dictionary(uniqueKeysWithValues: byStatus), open: open.map(OrderStats.OpenOrder.init), noDriverFound: noDriver ?? 0)
    }

    public func appendMessage(orderID: String, now: Date, _ make: @escaping @Sendable (Order, Int) throws -> ChatMessage) async throws
        -> ChatMessage
    {
        let logger = logger
        return try await postgres.write { connection in
            // The order's row locked: two instances appending to one chat number their messages in turn.
            guard let order = try await Self.fetch(connection, id: orderID, lock: true, logger: logger) else {
                throw OrderStoreFailure.unknownOrder
            }
            let last = try await connection.first(
                "SELECT COALESCE(MAX(number), 0) FROM messages WHERE order_id = \(orderID)", as: Int.self, logger: logger)
            let number = (last ?? 0) + 1
            let message = try make(order, number)
            try await connection.run(
                "INSERT INTO messages (order_id, number, document) VALUES (\(orderID), \(number), \(try JSONCoding.encodeText(message)))",
                logger: logger)
            try await PostgresOutbox.append(
                connection, Events.orderMessage, key: orderID,
                data: ChatMessageSent(message: message), time: now, logger: logger)
            return message
        }
    }

    public func messages(orderID: String, after: Int, limit: Int) async throws -> [ChatMessage] {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.all(
                "SELECT document FROM messages WHERE order_id = \(orderID) AND number > \(after) ORDER BY number LIMIT \(limit)",
                as: String.self, logger: logger
            )
            .map { try JSONCoding.decode(ChatMessage.self, fromText: $0) }
        }
    }

    public func history(of caller: Caller, before: HistoryCursor?, limit: Int) async throws -> RideHistory {
        let column = caller.role == .rider ? "rider_id" : "driver_id"
        let logger = logger
        let rows = try await postgres.read { connection in
            try await connection.all(
                """
                SELECT o.created_at_ms, o.id, o.document, p.document FROM orders o LEFT JOIN payments p ON p.order_id = o.id
                WHERE o.\(unescaped: column) = \(caller.id) AND o.status IN ('COMPLETED', 'CANCELLED')
                  AND (\(before == nil) OR o.created_at_ms < \(before?.createdAtMs ?? 0) OR (o.created_at_ms = \(before?.createdAtMs ?? 0) AND o.id < \(before?.id ?? "")))
                ORDER BY o.created_at_ms DESC, o.id DESC LIMIT \(limit + 1)
                """, as: (Int64, String, String, String?).self, logger: logger)
        }
        return try OrderRows.historyPage(rows, limit: limit)
    }

    public func recordPayment(_ payment: Payment) async throws -> (payment: Payment, recorded: Bool) {
        let logger = logger
        return try await postgres.write { connection in
            let inserted = try await connection.run(
                """
                INSERT INTO payments (order_id, driver_id, rider_id, day, amount_cents, earnings_cents, document)
                VALUES (\(payment.orderID), \(payment.driverID), \(payment.riderID), \(UTCDay.string(payment.capturedAt)), \(payment.amountCents),
                        \(payment.driverEarningsCents), \(try JSONCoding.encodeText(payment)))
                ON CONFLICT (order_id) DO NOTHING RETURNING 1
                """, logger: logger)
            guard inserted == 1 else {
                // Recorded before (by this instance or another): the first stands.
                let stored = try await connection.first(
                    "SELECT document FROM payments WHERE order_id = \(payment.orderID)", as: String.self, logger: logger)
                return (try stored.map { try JSONCoding.decode(Payment.self, fromText: $0) } ?? payment, false)
            }
            try await PostgresOutbox.append(
                connection, Events.orderPaid, data: OrderPaid(payment: payment),
                time: payment.capturedAt, logger: logger)
            return (payment, true)
        }
    }

    public func recordRefund(orderID: String, reference: String, at time: Date) async throws -> (payment: Payment, recorded: Bool)? {
        let logger = logger
        return try await postgres.write { connection in
            guard
                let stored = try await connection.first(
                    "SELECT document FROM payments WHERE order_id = \(orderID) FOR UPDATE", as: String.self, logger: logger)
            else {
                return nil
            }
            var payment = try JSONCoding.decode(Payment.self, fromText: stored)
            if payment.refundedAt != nil { return (payment, false) }
            (payment.refundedAt, payment.refundReference) = (time, reference)
            try await connection.run(
                "UPDATE payments SET amount_cents = 0, earnings_cents = 0, document = \(try JSONCoding.encodeText(payment)) WHERE order_id = \(orderID)",
                logger: logger)
            try await PostgresOutbox.append(
                connection, Events.orderRefunded, data: OrderRefunded(payment: payment),
                time: time, logger: logger)
            return (payment, true)
        }
    }

    public func payment(orderID: String) async throws -> Payment? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first("SELECT document FROM payments WHERE order_id = \(orderID)", as: String.self, logger: logger)
                .map { try JSONCoding.decode(Payment.self, fromText: $0) }
        }
    }

    public func earnings(driverID: String, from firstDay: String) async throws -> [DriverEarnings.Day] {
        let logger = logger
        return try await postgres.read { connection in
            // SUM of BIGINT is NUMERIC in PostgreSQL: cast back.
            try await connection.all(
                """
                SELECT day, COUNT(*), SUM(amount_cents)::BIGINT, SUM(earnings_cents)::BIGINT FROM payments
                WHERE driver_id = \(driverID) AND day >= \(firstDay) GROUP BY day ORDER BY day DESC
                """, as: (String, Int, Int, Int).self, logger: logger
            )
            .map { DriverEarnings.Day(day: $0.0, rides: $0.1, faresCents: $0.2, earningsCents: $0.3) }
        }
    }

    public func waitingOrders(near center: GeoPoint, radius: Double) async throws -> Int {
        let box = BoundingBox(around: center, radius: radius)
        let logger = logger
        let pickups = try await postgres.read { connection in
            try await connection.all(
                """
                SELECT pickup_latitude, pickup_longitude FROM orders
                WHERE status = 'NEW' AND pickup_latitude BETWEEN \(box.south) AND \(box.north) AND pickup_longitude BETWEEN \(box.west) AND \(box.east) LIMIT 10000
                """, as: (Double, Double).self, logger: logger)
        }
        return OrderRows.within(pickups, of: center, radius: radius)
    }
}
