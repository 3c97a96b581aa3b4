import Bus
import Foundation
import GRDB
import Geo
import RideContract
import RideModels
import Storage
import Synchronization
import Wire

/// Orders in one SQLite file: each order's document as JSON with the columns queries need, the
/// current offers, and the outbox of `order.status.*` events — every change and its event in one
/// transaction.
public final class OrderStore: OrderStorage, SQLiteServiceStore, DatabaseReactorCursors {
    public let database: DatabasePool
    /// The hot writes (each with its outbox event) are committed in groups.
    let writes: GroupCommit
    /// Orders as last committed, by id. A read takes an order's version column (cheap) and
    /// decodes the document only when the version differs — another writer moved it on, or it is
    /// not here. Decoding documents was 8% of ride-orders' CPU in `ridectl bench lifecycle`.
    /// Only committed states go in (after the transaction), so a rolled-back change is never
    /// served; every committed change bumps the version, so a hit is always current.
    private let decoded = Mutex<[String: Order]>([:])

    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: true)
        writes = GroupCommit(database: database)
    }

    /// The schema, one migration per version (the outbox table comes with the first).
    static let migrations: [ServiceDatabase.Migration] = [
        (
            "v1",
            """
            CREATE TABLE orders (
                id TEXT PRIMARY KEY NOT NULL,
                status TEXT NOT NULL,
                rider_id TEXT NOT NULL,
                driver_id TEXT,
                version INTEGER NOT NULL,
                pickup_latitude REAL NOT NULL,
                pickup_longitude REAL NOT NULL,
                created_at_ms INTEGER NOT NULL,
                document TEXT NOT NULL
            );
            -- One open order per rider, enforced by the database (two racing creates: one wins).
            CREATE UNIQUE INDEX one_open_order_per_rider ON orders (rider_id) WHERE status NOT IN ('COMPLETED', 'CANCELLED');
            CREATE INDEX orders_by_rider ON orders (rider_id, created_at_ms);
            CREATE INDEX orders_by_driver ON orders (driver_id, created_at_ms);
            CREATE INDEX orders_by_status_place ON orders (status, pickup_latitude, pickup_longitude);
            CREATE TABLE offers (
                order_id TEXT NOT NULL,
                driver_id TEXT NOT NULL,
                PRIMARY KEY (driver_id, order_id)
            ) WITHOUT ROWID;
            """
        ),
        (
            "v2",
            """
            -- The reactor's place in each source's events: everything up to it has been handled
            -- (the same as ReactorCursorTable.sql).
            CREATE TABLE reactor_cursors (source TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
            """
        ),
        (
            "v3",
            """
            -- The chat of each order, numbered 1, 2, 3… per order.
            CREATE TABLE messages (
                order_id TEXT NOT NULL,
                number INTEGER NOT NULL,
                document TEXT NOT NULL,
                PRIMARY KEY (order_id, number)
            ) WITHOUT ROWID;
            -- One payment per completed order; `day` (UTC) for a driver's earnings per day.
            CREATE TABLE payments (
                order_id TEXT PRIMARY KEY NOT NULL,
                driver_id TEXT NOT NULL,
                rider_id TEXT NOT NULL,
                day TEXT NOT NULL,
                amount_cents INTEGER NOT NULL,
                earnings_cents INTEGER NOT NULL,
                document TEXT NOT NULL
            );
            CREATE INDEX payments_by_driver_day ON payments (driver_id, day);
            """
        ),
        (
            "v4",
            """
            -- A ride's share link (orders.share): one id per order, found by it.
            ALTER TABLE orders ADD COLUMN share_id TEXT;
            CREATE UNIQUE INDEX orders_by_share ON orders (share_id) WHERE share_id IS NOT NULL;
            """
        ),
        // The keyed requests answered (idempotency keys), kept 24 hours.
        ("v5", RequestTable.sql),
        ("v6", Outbox.traceColumnsSQL),
        ("v7", ReportRows.sql),
    ]

    public func create(_ order: Order) async throws {
        try await writes.write { db in
            if let open = try db.value(
                String.self, "SELECT id FROM orders WHERE rider_id = ? AND \(OrderRows.openStatusSQL)",
                [order.rider.id])
            {
                throw OrderStoreFailure.openOrderExists(open)
            }
            let document = try JSONCoding.encode(order)
            try db.run(
                """
                INSERT INTO orders (id, status, rider_id, driver_id, version, pickup_latitude, pickup_longitude, created_at_ms, document)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    order.id, order.status.rawValue, order.rider.id, order.driver?.id, order.version, order.pickup.latitude,
                    order.pickup.longitude, OrderRows.milliseconds(order.createdAt), String(decoding: document, as: UTF8.self),
                ])
            try Self.replaceOffers(db, order)
            try Outbox.append(
                db, Events.orderStatus, key: order.status.rawValue,
                encoded: EncodedStatusChange(document: document, previousStatus: nil), time: order.updatedAt)
        }
        remember(order)
    }

    public func order(id: String) async throws -> Order? {
        let order = try await database.read { db in try self.fetch(db, id: id) }
        if let order { remember(order) }
        return order
    }

    public func order(shareID: String) async throws -> Order? {
        guard let id = try await database.read({ db in try db.value(String.self, "SELECT id FROM orders WHERE share_id = ?", [shareID]) })
        else { return nil }
        return try await order(id: id)
    }

    public func change(
        id: String, now: Date, sideEvents: @escaping @Sendable (Order, Order) -> [OrderSideEvent],
        _ body: @escaping @Sendable (inout Order) throws -> Void
    ) async throws -> (order: Order, previous: OrderStatus) {
        let changed: (order: Order, previous: OrderStatus) = try await writes.write { db in
            guard let order = try self.fetch(db, id: id) else { throw OrderStoreFailure.unknownOrder }
            guard let applied = try OrderRows.apply(body, to: order, now: now, sideEvents: sideEvents) else { return (order, order.status) }
            // SQLite's single writer makes this check and the update one step: no other accept runs between them.
            if let driver = OrderRows.newDriver(of: applied, before: order),
                let open = try db.value(
                    String.self, "SELECT id FROM orders WHERE driver_id = ? AND \(OrderRows.openStatusSQL) AND id != ? LIMIT 1",
                    [driver, id])
            {
                throw OrderStoreFailure.driverBusy(driver: driver, openOrder: open)
            }
            try db.run(
                "UPDATE orders SET status = ?, driver_id = ?, share_id = ?, version = ?, document = ? WHERE id = ? AND version = ?",
                [
                    applied.order.status.rawValue, applied.order.driver?.id, applied.order.shareID, applied.order.version,
                    String(decoding: applied.document, as: UTF8.self),
                    id, order.version,
                ])
            if applied.offersChanged { try Self.replaceOffers(db, applied.order) }
            for event in applied.events {
                _ = try Outbox.append(db, topic: event.topic(), type: event.kind.type, data: event.data, time: now)
            }
            return (applied.order, order.status)
        }
        remember(changed.order)
        return changed
    }

    public func orders(riderID: String, status: OrderStatus?, limit: Int) async throws -> [Order] {
        try await database.read { db in
            try Self.documents(
                db, sql: "SELECT document FROM orders WHERE rider_id = ? AND (? IS NULL OR status = ?) ORDER BY created_at_ms DESC LIMIT ?",
                arguments: [riderID, status?.rawValue, status?.rawValue, limit])
        }
    }

    public func orders(driverID: String, status: OrderStatus?, limit: Int) async throws -> [Order] {
        try await database.read { db in
            try Self.documents(
                db,
                sql: """
                    SELECT document FROM orders
                    WHERE (driver_id = ? OR id IN (SELECT order_id FROM offers WHERE driver_id = ?)) AND (? IS NULL OR status = ?)
                    ORDER BY created_at_ms DESC LIMIT ?
                    """, arguments: [driverID, driverID, status?.rawValue, status?.rawValue, limit])
        }
    }

    public func newOrders(limit: Int) async throws -> [Order] {
        try await database.read { db in
            try Self.documents(
                db, sql: "SELECT document FROM orders WHERE status = 'NEW' ORDER BY created_at_ms LIMIT ?", arguments: [limit])
        }
    }

    public func orders(status: OrderStatus, near center: GeoPoint, radius: Double, offeredTo: String?, limit: Int) async throws -> [Order] {
        let box = BoundingBox(around: center, radius: radius)
        let candidates = try await database.read { db in
            try Self.documents(
                db,
                sql: """
                    SELECT document FROM orders WHERE status = ? AND pickup_latitude BETWEEN ? AND ? AND pickup_longitude BETWEEN ? AND ?
                    LIMIT 5000
                    """, arguments: [status.rawValue, box.south, box.north, box.west, box.east])
        }
        return OrderRows.nearest(candidates, to: center, radius: radius, offeredTo: offeredTo, limit: limit)
    }

    public func stats(openLimit: Int) async throws -> OrderStats {
        try await database.read { db in
            var byStatus: [String: Int] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT status, COUNT(*) FROM orders GROUP BY status")) {
                byStatus[row[0]] = row[1]
            }
            let open = try Self.documents(
                db,
                sql: """
                    SELECT document FROM orders WHERE \(OrderRows.openStatusSQL) ORDER BY created_at_ms DESC LIMIT ?
                    """, arguments: [openLimit])
            let noDriver = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM orders WHERE status = ? AND document LIKE ?",
                arguments: [OrderStatus.cancelled.rawValue, OrderStats.noDriverFoundPattern])
            return OrderStats(byStatus: byStatus, open: open.map(OrderStats.OpenOrder.init), noDriverFound: noDriver ?? 0)
        }
    }

    public func driversWithOpenOrders(among drivers: [String]) async throws -> Set<String> {
        guard !drivers.isEmpty else { return [] }
        return try await database.read { db in
            try String.fetchSet(
                db.cachedStatement(
                    sql: """
                        SELECT driver_id FROM orders WHERE driver_id IN (\(databaseQuestionMarks(count: drivers.count))) AND \(OrderRows.openStatusSQL)
                        """),
                arguments: StatementArguments(drivers))
        }
    }

    /// The order as stored in `db` now, decoded only when the cache does not hold its version.
    func fetch(_ db: Database, id: String) throws -> Order? {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT version, document FROM orders WHERE id = ?"), arguments: [id])
        guard let row = try rows.next() else { return nil }
        let version: Int = row[0]
        if let cached = decoded.withLock({ $0[id] }), cached.version == version { return cached }
        return try OrderRows.decode(row[1])
    }

    /// Keeps a committed order for the next read; open orders only (a finished one is rarely read again).
    private func remember(_ order: Order) {
        decoded.withLock { cache in
            guard order.status.isOpen else {
                cache[order.id] = nil
                return
            }
            if cache.count >= 50_000 { cache.removeAll(keepingCapacity: true) }
            if let held = cache[order.id], held.version > order.version { return }  // a read at an older snapshot
            cache[order.id] = order
        }
    }

    static func documents(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Order] {
        try String.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map(OrderRows.decode)
    }

    static func replaceOffers(_ db: Database, _ order: Order) throws {
        try db.run("DELETE FROM offers WHERE order_id = ?", [order.id])
        for driver in order.offeredTo {
            try db.run("INSERT OR IGNORE INTO offers (order_id, driver_id) VALUES (?, ?)", [order.id, driver])
        }
    }
}

/// An `order.status.*` event's data around an order already encoded for the store: the same
/// bytes as encoding `OrderStatusChanged`.
@WireModel
struct EncodedStatusChange: Codable, EncodedPayload {
    typealias Payload = OrderStatusChanged

    var order: PreEncoded<Order>
    var previousStatus: OrderStatus?

    init(document: [UInt8], previousStatus: OrderStatus?) {
        order = PreEncoded(json: document)
        self.previousStatus = previousStatus
    }
}

/// The latitude/longitude box around a circle (a pre-filter for an index range; the exact
/// distance decides). Clamped at the poles; a box across the dateline widens to every longitude.
struct BoundingBox {
    var south, north, west, east: Double

    init(around center: GeoPoint, radius: Double) {
        let latitudeDelta = radius / 111_320
        south = max(-90, center.latitude - latitudeDelta)
        north = min(90, center.latitude + latitudeDelta)
        let cosine = cos(center.latitude * .pi / 180)
        let longitudeDelta = cosine > 1e-6 ? radius / (111_320 * cosine) : 360
        if center.longitude - longitudeDelta < -180 || center.longitude + longitudeDelta > 180 || longitudeDelta >= 180 {
            west = -180
            east = 180
        } else {
            west = center.longitude - longitudeDelta
            east = center.longitude + longitudeDelta
        }
    }
}
