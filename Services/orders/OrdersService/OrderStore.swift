import Bus
import Foundation
import Geo
import GRDB
import RideModels
import Storage

/// Orders in one SQLite file: each order's document as JSON with the columns queries need, the
/// current offers, and the outbox of `order.status.*` events — every change and its event in one
/// transaction.
public final class OrderStore: Sendable {
    public let database: DatabasePool

    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: true)
    }

    /// The schema, one migration per version (the outbox table comes with the first).
    static let migrations: [ServiceDatabase.Migration] = [("v1", """
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
                """),
        ("v2", """
            -- The reactor's place in each source's events: everything up to it has been handled.
            CREATE TABLE reactor_cursors (source TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
            """),
    ]

    public enum Failure: Error, Equatable {
        case openOrderExists(String)
        case unknownOrder
    }

    /// Stores a new order and its `order.status.NEW` event.
    public func create(_ order: Order) async throws {
        try await database.write { db in
            if let open = try String.fetchOne(db, sql: "SELECT id FROM orders WHERE rider_id = ? AND status NOT IN ('COMPLETED', 'CANCELLED')",
                                              arguments: [order.rider.id]) {
                throw Failure.openOrderExists(open)
            }
            try db.execute(sql: """
                INSERT INTO orders (id, status, rider_id, driver_id, version, pickup_latitude, pickup_longitude, created_at_ms, document)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [order.id, order.status.rawValue, order.rider.id, order.driver?.id, order.version, order.pickup.latitude,
                                 order.pickup.longitude, Int64((order.createdAt.timeIntervalSince1970 * 1000).rounded()), try Self.document(order)])
            try Self.replaceOffers(db, order)
            try Outbox.append(db, topic: BusContract.Topics.orderStatus + order.status.rawValue, type: "order.status",
                              data: OrderStatusChanged(order: order, previousStatus: nil), time: order.updatedAt)
        }
    }

    public func order(id: String) async throws -> Order? {
        try await database.read { db in try Self.fetch(db, id: id) }
    }

    /// Changes an order in one transaction: `body` sees the current order and changes it or
    /// throws (nothing is written). The version grows by one; a new status gets its event.
    public func change(id: String, now: Date = Date(), _ body: @escaping @Sendable (inout Order) throws -> Void) async throws -> (order: Order, previous: OrderStatus) {
        try await database.write { db in
            guard var order = try Self.fetch(db, id: id) else { throw Failure.unknownOrder }
            let previous = order.status
            let before = order
            try body(&order)
            guard order != before else { return (order, previous) }
            order.version = before.version + 1
            order.updatedAt = now
            try db.execute(sql: "UPDATE orders SET status = ?, driver_id = ?, version = ?, document = ? WHERE id = ? AND version = ?",
                           arguments: [order.status.rawValue, order.driver?.id, order.version, try Self.document(order), id, before.version])
            if order.offeredTo != before.offeredTo { try Self.replaceOffers(db, order) }
            if order.status != previous {
                try Outbox.append(db, topic: BusContract.Topics.orderStatus + order.status.rawValue, type: "order.status",
                                  data: OrderStatusChanged(order: order, previousStatus: previous), time: now)
            }
            return (order, previous)
        }
    }

    /// A rider's orders, newest first.
    public func orders(riderID: String, status: OrderStatus?, limit: Int) async throws -> [Order] {
        try await database.read { db in
            try Self.documents(db, sql: "SELECT document FROM orders WHERE rider_id = ? AND (? IS NULL OR status = ?) ORDER BY created_at_ms DESC LIMIT ?",
                               arguments: [riderID, status?.rawValue, status?.rawValue, limit])
        }
    }

    /// A driver's orders — accepted by them or offered to them — newest first.
    public func orders(driverID: String, status: OrderStatus?, limit: Int) async throws -> [Order] {
        try await database.read { db in
            try Self.documents(db, sql: """
                SELECT document FROM orders
                WHERE (driver_id = ? OR id IN (SELECT order_id FROM offers WHERE driver_id = ?)) AND (? IS NULL OR status = ?)
                ORDER BY created_at_ms DESC LIMIT ?
                """, arguments: [driverID, driverID, status?.rawValue, status?.rawValue, limit])
        }
    }

    /// `NEW` orders, oldest first (for dispatch rounds).
    public func newOrders(limit: Int) async throws -> [Order] {
        try await database.read { db in
            try Self.documents(db, sql: "SELECT document FROM orders WHERE status = 'NEW' ORDER BY created_at_ms LIMIT ?", arguments: [limit])
        }
    }

    /// Orders of `status` whose pickup is within `radius` metres of `center`, nearest first.
    public func orders(status: OrderStatus, near center: GeoPoint, radius: Double, limit: Int) async throws -> [Order] {
        let box = BoundingBox(around: center, radius: radius)
        let candidates = try await database.read { db in
            try Self.documents(db, sql: """
                SELECT document FROM orders WHERE status = ? AND pickup_latitude BETWEEN ? AND ? AND pickup_longitude BETWEEN ? AND ?
                LIMIT 5000
                """, arguments: [status.rawValue, box.south, box.north, box.west, box.east])
        }
        return candidates
            .map { ($0, center.distance(to: GeoPoint(latitude: $0.pickup.latitude, longitude: $0.pickup.longitude))) }
            .filter { $0.1 <= radius }
            .sorted { $0.1 < $1.1 }
            .prefix(limit)
            .map(\.0)
    }

    /// The last sequence of `source` the reactor has fully handled (0 at first).
    public func reactorCursor(source: String) async throws -> UInt64 {
        try await database.read { db in
            UInt64(try Int64.fetchOne(db, sql: "SELECT sequence FROM reactor_cursors WHERE source = ?", arguments: [source]) ?? 0)
        }
    }

    public func saveReactorCursor(source: String, sequence: UInt64) async throws {
        try await database.write { db in
            try db.execute(sql: "INSERT INTO reactor_cursors (source, sequence) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET sequence = excluded.sequence",
                           arguments: [source, Int64(sequence)])
        }
    }

    static func fetch(_ db: Database, id: String) throws -> Order? {
        try String.fetchOne(db, sql: "SELECT document FROM orders WHERE id = ?", arguments: [id]).map(decode)
    }

    static func documents(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Order] {
        try String.fetchAll(db, sql: sql, arguments: arguments).map(decode)
    }

    static func decode(_ document: String) throws -> Order {
        try JSONCoding.decode(Order.self, from: Array(document.utf8))
    }

    static func document(_ order: Order) throws -> String {
        String(decoding: try JSONCoding.encode(order), as: UTF8.self)
    }

    static func replaceOffers(_ db: Database, _ order: Order) throws {
        try db.execute(sql: "DELETE FROM offers WHERE order_id = ?", arguments: [order.id])
        for driver in order.offeredTo {
            try db.execute(sql: "INSERT OR IGNORE INTO offers (order_id, driver_id) VALUES (?, ?)", arguments: [order.id, driver])
        }
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
