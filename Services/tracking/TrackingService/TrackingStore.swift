import Bus
import Foundation
import GRDB
import GRDBSQLite
import RideModels
import Storage
import Wire

/// What one group commit stores for one device: its record, and the history it brought.
public struct TrackingWrite: Sendable {
    public var record: DeviceRecord
    /// When false, only the moving parts of the record are written (position, activity, sequence),
    /// not its name, metadata and intents — most batches change nothing else.
    public var intentsChanged: Bool
    public var locations: [DeviceLocation]
    public var geotags: [GeotagRecord]

    public init(record: DeviceRecord, intentsChanged: Bool = true, locations: [DeviceLocation] = [], geotags: [GeotagRecord] = []) {
        self.record = record
        self.intentsChanged = intentsChanged
        self.locations = locations
        self.geotags = geotags
    }
}

/// Tracking's storage: SQLite (embedded, the default) here, PostgreSQL in `PostgresTrackingStore`
/// (`--database-url`). `commit` is called from the writer thread and may block; the rest is async.
public protocol TrackingStore: Sendable {
    /// Every device, to rebuild the in-memory state at start-up.
    func loadDevices() async throws -> [DeviceRecord]
    /// These devices, those the store has (a shard reads a device another shard served).
    func loadDevices(ids: [String]) async throws -> [DeviceRecord]
    /// Stores a group of writes in one transaction. History is idempotent: a location already
    /// stored (same device, same `recorded_at`) is not stored twice.
    func commit(_ writes: [TrackingWrite]) throws
    /// A device's locations and geotags in `[from, to]`, oldest first, at most `limit` locations.
    func history(deviceID: String, from: Date?, to: Date?, limit: Int) async throws -> LocationHistory
    /// Where keyed requests are remembered (`OpRouter.requests`).
    var requestLog: any RequestLog { get }
}

/// Tracking's tables in one SQLite file (WAL: history reads never wait for the writer).
///
/// `locations` is a WITHOUT ROWID table keyed by (device, time): a device's history is contiguous
/// on disk, so a time-range read is one index range, and a resent location is ignored by the key.
public final class SQLiteTrackingStore: TrackingStore {
    private let pool: DatabasePool

    public init(path: String) throws {
        pool = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: false) { db in
            // 64 MiB of page cache per connection (the default is 2 MiB): the writer touches the
            // pages of thousands of devices in every group commit, and with the small cache it read
            // most of them back from the file (measured 6 600 page reads a second at 50 000 loc/s).
            try db.execute(sql: "PRAGMA cache_size = -65536")
        }
    }

    /// The schema, one migration per version.
    static let migrations: [ServiceDatabase.Migration] = [
        (
            "v1",
            """
            CREATE TABLE devices (
                id TEXT PRIMARY KEY NOT NULL,
                name TEXT,
                metadata TEXT NOT NULL,
                available INTEGER NOT NULL,
                tracking INTEGER NOT NULL,
                intents_changed_at INTEGER NOT NULL,
                activity TEXT NOT NULL,
                last_seen INTEGER,
                sequence INTEGER NOT NULL,
                latest_latitude REAL,
                latest_longitude REAL,
                latest_recorded_at INTEGER,
                latest_accuracy REAL,
                latest_speed REAL,
                latest_bearing REAL
            );
            CREATE TABLE locations (
                device_id TEXT NOT NULL,
                recorded_at INTEGER NOT NULL,
                latitude REAL NOT NULL,
                longitude REAL NOT NULL,
                accuracy REAL,
                speed REAL,
                bearing REAL,
                altitude REAL,
                mocked INTEGER,
                PRIMARY KEY (device_id, recorded_at)
            ) WITHOUT ROWID;
            CREATE TABLE geotags (
                id INTEGER PRIMARY KEY,
                device_id TEXT NOT NULL,
                recorded_at INTEGER NOT NULL,
                latitude REAL NOT NULL,
                longitude REAL NOT NULL,
                accuracy REAL,
                metadata TEXT NOT NULL,
                UNIQUE (device_id, recorded_at, metadata)
            );
            CREATE INDEX geotags_by_device_time ON geotags (device_id, recorded_at);
            """
        ),
        (
            "v2",
            """
            ALTER TABLE devices ADD COLUMN platform_tracking INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE devices ADD COLUMN platform_tracking_at INTEGER;
            """
        ),
        // The keyed requests answered (idempotency keys), kept 24 hours.
        ("v3", RequestTable.sql),
    ]

    public var requestLog: any RequestLog { SQLiteRequestLog(database: pool) }

    public func loadDevices() async throws -> [DeviceRecord] {
        try await pool.read { db in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM devices")).map(Self.record) }
    }

    public func loadDevices(ids: [String]) async throws -> [DeviceRecord] {
        let list = String(decoding: try JSONCoding.encode(ids), as: UTF8.self)
        return try await pool.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM devices WHERE id IN (SELECT value FROM json_each(?))"), arguments: [list]
            ).map(Self.record)
        }
    }

    private static func record(_ row: Row) -> DeviceRecord {
        var record = DeviceRecord(id: row["id"])
        record.name = row["name"]
        record.metadata = (try? JSONCoding.decode([String: JSONValue].self, from: Array((row["metadata"] as String).utf8))) ?? [:]
        record.available = row["available"]
        record.tracking = row["tracking"]
        record.intentsChangedAt = Self.date(row["intents_changed_at"])
        record.activity = DeviceActivity(rawValue: row["activity"]) ?? .inactive
        record.lastSeen = (row["last_seen"] as Int64?).map(Self.date)
        record.sequence = UInt64(row["sequence"] as Int64)
        record.platformTracking = row["platform_tracking"]
        record.platformTrackingAt = (row["platform_tracking_at"] as Int64?).map(Self.date)
        if let latitude: Double = row["latest_latitude"], let longitude: Double = row["latest_longitude"],
            let recordedAt: Int64 = row["latest_recorded_at"]
        {
            record.latest = DeviceLocation(
                latitude: latitude, longitude: longitude, recordedAt: Self.date(recordedAt),
                accuracy: row["latest_accuracy"], speed: row["latest_speed"], bearing: row["latest_bearing"])
        }
        return record
    }

    /// Statements are bound through SQLite's C interface: a group commit runs thousands of inserts,
    /// and binding through GRDB's generic arguments costs more than SQLite's own work here.
    public func commit(_ writes: [TrackingWrite]) throws {
        try pool.write { db in
            let upsertDevice = try db.cachedStatement(
                sql:
                    "INSERT INTO devices (\(DeviceUpsertSQL.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \(DeviceUpsertSQL.onConflict)"
            ).sqliteStatement
            let updateDevice = try db.cachedStatement(
                sql: """
                    UPDATE devices SET activity = ?, last_seen = ?, sequence = ?, latest_latitude = ?, latest_longitude = ?,
                        latest_recorded_at = ?, latest_accuracy = ?, latest_speed = ?, latest_bearing = ? WHERE id = ?
                    """
            ).sqliteStatement
            let insertLocation = try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO locations (device_id, recorded_at, latitude, longitude, accuracy, speed, bearing, altitude, mocked)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).sqliteStatement
            let insertGeotag = try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO geotags (device_id, recorded_at, latitude, longitude, accuracy, metadata) VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).sqliteStatement
            let connection = db.sqliteConnection
            for write in writes {
                let record = write.record
                let latest = record.latest
                if write.intentsChanged {
                    var bind = Binder(upsertDevice)
                    bind.text(record.id)
                    bind.text(record.name)
                    bind.text(String(decoding: JSONValue.object(record.metadata).jsonBytes, as: UTF8.self))
                    bind.bool(record.available)
                    bind.bool(record.tracking)
                    bind.integer(Self.milliseconds(record.intentsChangedAt))
                    bind.text(record.activity.rawValue)
                    bind.integer(record.lastSeen.map(Self.milliseconds))
                    bind.integer(Int64(record.sequence))
                    bind.latest(latest)
                    bind.bool(record.platformTracking)
                    bind.integer(record.platformTrackingAt.map(Self.milliseconds))
                    try Self.step(upsertDevice, connection)
                } else {
                    var bind = Binder(updateDevice)
                    bind.text(record.activity.rawValue)
                    bind.integer(record.lastSeen.map(Self.milliseconds))
                    bind.integer(Int64(record.sequence))
                    bind.latest(latest)
                    bind.text(record.id)
                    try Self.step(updateDevice, connection)
                }
                for location in write.locations {
                    var bind = Binder(insertLocation)
                    bind.text(record.id)
                    bind.integer(Self.milliseconds(location.recordedAt))
                    bind.real(location.latitude)
                    bind.real(location.longitude)
                    bind.real(location.accuracy)
                    bind.real(location.speed)
                    bind.real(location.bearing)
                    bind.real(location.altitude)
                    bind.integer(location.mocked.map { $0 ? 1 : 0 })
                    try Self.step(insertLocation, connection)
                }
                for geotag in write.geotags {
                    var bind = Binder(insertGeotag)
                    bind.text(record.id)
                    bind.integer(Self.milliseconds(geotag.location.recordedAt))
                    bind.real(geotag.location.latitude)
                    bind.real(geotag.location.longitude)
                    bind.real(geotag.location.accuracy)
                    bind.text(String(decoding: JSONValue.object(geotag.metadata).jsonBytes, as: UTF8.self))
                    try Self.step(insertGeotag, connection)
                }
            }
        }
    }

    private static func step(_ statement: OpaquePointer, _ connection: OpaquePointer?) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) })
        }
    }

    public func history(deviceID: String, from: Date?, to: Date?, limit: Int) async throws -> LocationHistory {
        let lower = from.map(Self.milliseconds) ?? Int64.min
        let upper = to.map(Self.milliseconds) ?? Int64.max
        return try await pool.read { db in
            let locations = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM locations WHERE device_id = ? AND recorded_at BETWEEN ? AND ? ORDER BY recorded_at LIMIT ?
                        """), arguments: [deviceID, lower, upper, limit]
            ).map { row in
                DeviceLocation(
                    latitude: row["latitude"], longitude: row["longitude"], recordedAt: Self.date(row["recorded_at"]),
                    accuracy: row["accuracy"], speed: row["speed"], bearing: row["bearing"], altitude: row["altitude"],
                    mocked: row["mocked"])
            }
            let geotags = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM geotags WHERE device_id = ? AND recorded_at BETWEEN ? AND ? ORDER BY recorded_at
                        """), arguments: [deviceID, lower, upper]
            ).map { row in
                GeotagRecord(
                    metadata: (try? JSONCoding.decode([String: JSONValue].self, from: Array((row["metadata"] as String).utf8))) ?? [:],
                    location: DeviceLocation(
                        latitude: row["latitude"], longitude: row["longitude"], recordedAt: Self.date(row["recorded_at"]),
                        accuracy: row["accuracy"]))
            }
            return LocationHistory(deviceID: deviceID, locations: locations, geotags: geotags)
        }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// Binds a statement's parameters in order, straight through SQLite's C interface.
private struct Binder {
    /// SQLite copies the text before `bind` returns (SQLITE_TRANSIENT), so Swift's buffer may go.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    let statement: OpaquePointer
    var index: Int32 = 1

    init(_ statement: OpaquePointer) { self.statement = statement }

    mutating func text(_ value: String?) {
        if let value {
            var copy = value
            copy.withUTF8 { bytes in
                _ = sqlite3_bind_text(
                    statement, index, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                    Self.transient)
            }
        } else {
            sqlite3_bind_null(statement, index)
        }
        index += 1
    }

    mutating func integer(_ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
        index += 1
    }

    mutating func bool(_ value: Bool) { integer(value ? 1 : 0) }

    mutating func real(_ value: Double?) {
        if let value { sqlite3_bind_double(statement, index, value) } else { sqlite3_bind_null(statement, index) }
        index += 1
    }

    /// The six `latest_*` columns.
    mutating func latest(_ location: DeviceLocation?) {
        real(location?.latitude)
        real(location?.longitude)
        integer(location.map { SQLiteTrackingStore.milliseconds($0.recordedAt) })
        real(location?.accuracy)
        real(location?.speed)
        real(location?.bearing)
    }
}

/// A device written whole, in both stores' SQL: its columns in the order their values are bound,
/// and the update of an existing row.
enum DeviceUpsertSQL {
    static let columns = """
        id, name, metadata, available, tracking, intents_changed_at, activity, last_seen, sequence, latest_latitude, latest_longitude,
        latest_recorded_at, latest_accuracy, latest_speed, latest_bearing, platform_tracking, platform_tracking_at
        """
    static let onConflict = """
        ON CONFLICT (id) DO UPDATE SET name = excluded.name, metadata = excluded.metadata, available = excluded.available,
            tracking = excluded.tracking, intents_changed_at = excluded.intents_changed_at, activity = excluded.activity,
            platform_tracking = excluded.platform_tracking, platform_tracking_at = excluded.platform_tracking_at,
            last_seen = excluded.last_seen, sequence = excluded.sequence, latest_latitude = excluded.latest_latitude,
            latest_longitude = excluded.latest_longitude, latest_recorded_at = excluded.latest_recorded_at,
            latest_accuracy = excluded.latest_accuracy, latest_speed = excluded.latest_speed, latest_bearing = excluded.latest_bearing
        WHERE devices.sequence <= excluded.sequence
        """
}
