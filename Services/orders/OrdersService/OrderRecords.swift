import Bus
import Foundation
import GRDB
import Geo
import RideContract
import RideModels
import Storage
import Wire

/// What `orders` keeps beside each order: its chat, its payment, and the queries of ride history,
/// earnings and demand. Each write commits with its event, as order changes do.
extension OrderStore {
    public func appendMessage(
        orderID: String, now: Date,
        _ make: @escaping @Sendable (Order, Int) throws -> ChatMessage
    ) async throws -> ChatMessage {
        try await writes.write { db in
            guard let order = try self.fetch(db, id: orderID) else { throw OrderStoreFailure.unknownOrder }
            let number = (try db.value(Int.self, "SELECT MAX(number) FROM messages WHERE order_id = ?", [orderID]) ?? 0) + 1
            let message = try make(order, number)
            try db.run(
                "INSERT INTO messages (order_id, number, document) VALUES (?, ?, ?)",
                [orderID, number, try JSONCoding.encodeText(message)])
            try Outbox.append(
                db, Events.orderMessage, key: orderID, data: ChatMessageSent(message: message),
                time: now)
            return message
        }
    }

    /// An order's messages after number `after`, oldest first.
    public func messages(orderID: String, after: Int, limit: Int) async throws -> [ChatMessage] {
        try await database.read { db in
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT document FROM messages WHERE order_id = ? AND number > ? ORDER BY number LIMIT ?"),
                arguments: [orderID, after, limit]
            )
            .map { try JSONCoding.decode(ChatMessage.self, fromText: $0) }
        }
    }

    /// A rider's or driver's finished orders (completed or cancelled), newest first, with their payments.
    public func history(of caller: Caller, before: HistoryCursor?, limit: Int) async throws -> RideHistory {
        let column = caller.role == .rider ? "rider_id" : "driver_id"
        return try await database.read { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT o.created_at_ms, o.id, o.document, p.document FROM orders o LEFT JOIN payments p ON p.order_id = o.id
                        WHERE o.\(column) = ? AND o.status IN ('COMPLETED', 'CANCELLED')
                          AND (? IS NULL OR o.created_at_ms < ? OR (o.created_at_ms = ? AND o.id < ?))
                        ORDER BY o.created_at_ms DESC, o.id DESC LIMIT ?
                        """), arguments: [caller.id, before?.createdAtMs, before?.createdAtMs, before?.createdAtMs, before?.id, limit + 1])
            return try OrderRows.historyPage(rows.map { ($0[0], $0[1], $0[2], $0[3]) }, limit: limit)
        }
    }

    /// Records a completed order's payment and its `order.paid` event, once: a second record for
    /// the same order changes nothing and returns the first.
    public func recordPayment(_ payment: Payment) async throws -> (payment: Payment, recorded: Bool) {
        try await writes.write { db in
            if let stored = try db.value(String.self, "SELECT document FROM payments WHERE order_id = ?", [payment.orderID]) {
                return (try JSONCoding.decode(Payment.self, fromText: stored), false)
            }
            try db.run(
                """
                INSERT INTO payments (order_id, driver_id, rider_id, day, amount_cents, earnings_cents, document) VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    payment.orderID, payment.driverID, payment.riderID, UTCDay.string(payment.capturedAt), payment.amountCents,
                    payment.driverEarningsCents, try JSONCoding.encodeText(payment),
                ])
            try Outbox.append(
                db, Events.orderPaid, data: OrderPaid(payment: payment), time: payment.capturedAt)
            return (payment, true)
        }
    }

    public func recordRefund(orderID: String, reference: String, at time: Date) async throws -> (payment: Payment, recorded: Bool)? {
        try await writes.write { db in
            guard let stored = try db.value(String.self, "SELECT document FROM payments WHERE order_id = ?", [orderID]) else { return nil }
            var payment = try JSONCoding.decode(Payment.self, fromText: stored)
            if payment.refundedAt != nil { return (payment, false) }
            (payment.refundedAt, payment.refundReference) = (time, reference)
            try db.run(
                "UPDATE payments SET amount_cents = 0, earnings_cents = 0, document = ? WHERE order_id = ?",
                [try JSONCoding.encodeText(payment), orderID])
            try Outbox.append(
                db, Events.orderRefunded, data: OrderRefunded(payment: payment), time: time)
            return (payment, true)
        }
    }

    public func payment(orderID: String) async throws -> Payment? {
        try await database.read { db in
            try db.value(String.self, "SELECT document FROM payments WHERE order_id = ?", [orderID])
                .map { try JSONCoding.decode(Payment.self, fromText: $0) }
        }
    }

    /// A driver's rides, fares and earnings per UTC day from `firstDay` on, newest first.
    public func earnings(driverID: String, from firstDay: String) async throws -> [DriverEarnings.Day] {
        try await database.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT day, COUNT(*), SUM(amount_cents), SUM(earnings_cents) FROM payments
                        WHERE driver_id = ? AND day >= ? GROUP BY day ORDER BY day DESC
                        """), arguments: [driverID, firstDay]
            )
            .map { DriverEarnings.Day(day: $0[0], rides: $0[1], faresCents: $0[2], earningsCents: $0[3]) }
        }
    }

    /// How many `NEW` orders wait within `radius` metres of `center` (surge pricing's demand).
    public func waitingOrders(near center: GeoPoint, radius: Double) async throws -> Int {
        let box = BoundingBox(around: center, radius: radius)
        return try await database.read { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT pickup_latitude, pickup_longitude FROM orders
                        WHERE status = 'NEW' AND pickup_latitude BETWEEN ? AND ? AND pickup_longitude BETWEEN ? AND ? LIMIT 10000
                        """), arguments: [box.south, box.north, box.west, box.east])
            return OrderRows.within(rows.map { ($0[0], $0[1]) }, of: center, radius: radius)
        }
    }
}

/// Calendar days in UTC, as `YYYY-MM-DD` (sorts as text).
public enum UTCDay {
    public static func string(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
