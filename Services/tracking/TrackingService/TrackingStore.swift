import Bus
import Foundation
import GRDB
import RideModels

/// What one group commit stores for one device: its record, and the history it brought.
public struct TrackingWrite: Sendable {
    public var record: DeviceRecord
    public var locations: [DeviceLocation]
    public var geotags: [GeotagRecord]

    public init(record: DeviceRecord, locations: [DeviceLocation] = [], geotags: [GeotagRecord] = []) {
        self.record = record
        self.locations = locations
        self.geotags = geotags
    }
}

/// Tracking's storage. SQLite (embedded, the default) implements it here; PostgreSQL comes with
/// scale-out. `commit` is called from the writer thread and may block; the rest is async.
public protocol TrackingStore: Sendable {
    /// Every device, to rebuild the in-memory state at start-up.
    func loadDevices() throws -> [DeviceRecord]
    /// Stores a group of writes in one transaction. History is idempotent: a location already
    /// stored (same device, same `recorded_at`) is not stored twice.
    func commit(_ writes: [TrackingWrite]) throws
    /// A device's locations and geotags in `[from, to]`, oldest first, at most `limit` locations.
    func history(deviceID: String, from: Date?, to: Date?, limit: Int) async throws -> LocationHistory
}

/// Tracking's tables in one SQLite file (WAL: history reads never wait for the writer).
///
/// `locations` is a WITHOUT ROWID table keyed by (device, time): a device's history is contiguous
/// on disk, so a time-range read is one index range, and a resent location is ignored by the key.
public final class SQLiteTrackingStore: TrackingStore {
    private let pool: DatabasePool

    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // WAL + NORMAL: a commit survives a process crash; only a power cut can lose the last ones.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
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
                    latest TEXT
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
                """)
        }
        return migrator
    }

    public func loadDevices() throws -> [DeviceRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM devices").map { row in
                var record = DeviceRecord(id: row["id"])
                record.name = row["name"]
                record.metadata = (try? JSONCoding.decode([String: JSONValue].self, from: Array((row["metadata"] as String).utf8))) ?? [:]
                record.available = row["available"]
                record.tracking = row["tracking"]
                record.intentsChangedAt = Self.date(row["intents_changed_at"])
                record.activity = DeviceActivity(rawValue: row["activity"]) ?? .inactive
                record.lastSeen = (row["last_seen"] as Int64?).map(Self.date)
                record.sequence = UInt64(row["sequence"] as Int64)
                if let latest: String = row["latest"] {
                    record.latest = try? JSONCoding.decode(DeviceLocation.self, from: Array(latest.utf8))
                }
                return record
            }
        }
    }

    public func commit(_ writes: [TrackingWrite]) throws {
        try pool.write { db in
            let upsertDevice = try db.cachedStatement(sql: """
                INSERT INTO devices (id, name, metadata, available, tracking, intents_changed_at, activity, last_seen, sequence, latest)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, metadata = excluded.metadata, available = excluded.available,
                    tracking = excluded.tracking, intents_changed_at = excluded.intents_changed_at, activity = excluded.activity,
                    last_seen = excluded.last_seen, sequence = excluded.sequence, latest = excluded.latest
                """)
            let insertLocation = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO locations (device_id, recorded_at, latitude, longitude, accuracy, speed, bearing, altitude, mocked)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            let insertGeotag = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO geotags (device_id, recorded_at, latitude, longitude, accuracy, metadata) VALUES (?, ?, ?, ?, ?, ?)
                """)
            for write in writes {
                let record = write.record
                let metadata = String(decoding: try JSONCoding.encode(record.metadata), as: UTF8.self)
                let latest = try record.latest.map { String(decoding: try JSONCoding.encode($0), as: UTF8.self) }
                try upsertDevice.execute(arguments: [
                    record.id, record.name, metadata, record.available, record.tracking, Self.milliseconds(record.intentsChangedAt),
                    record.activity.rawValue, record.lastSeen.map(Self.milliseconds), Int64(record.sequence), latest,
                ])
                for location in write.locations {
                    try insertLocation.execute(arguments: [
                        record.id, Self.milliseconds(location.recordedAt), location.latitude, location.longitude, location.accuracy,
                        location.speed, location.bearing, location.altitude, location.mocked,
                    ])
                }
                for geotag in write.geotags {
                    let tagMetadata = String(decoding: try JSONCoding.encode(geotag.metadata), as: UTF8.self)
                    try insertGeotag.execute(arguments: [
                        record.id, Self.milliseconds(geotag.location.recordedAt), geotag.location.latitude, geotag.location.longitude,
                        geotag.location.accuracy, tagMetadata,
                    ])
                }
            }
        }
    }

    public func history(deviceID: String, from: Date?, to: Date?, limit: Int) async throws -> LocationHistory {
        let lower = from.map(Self.milliseconds) ?? Int64.min
        let upper = to.map(Self.milliseconds) ?? Int64.max
        return try await pool.read { db in
            let locations = try Row.fetchAll(db, sql: """
                SELECT * FROM locations WHERE device_id = ? AND recorded_at BETWEEN ? AND ? ORDER BY recorded_at LIMIT ?
                """, arguments: [deviceID, lower, upper, limit]).map { row in
                DeviceLocation(latitude: row["latitude"], longitude: row["longitude"], recordedAt: Self.date(row["recorded_at"]),
                               accuracy: row["accuracy"], speed: row["speed"], bearing: row["bearing"], altitude: row["altitude"],
                               mocked: row["mocked"])
            }
            let geotags = try Row.fetchAll(db, sql: """
                SELECT * FROM geotags WHERE device_id = ? AND recorded_at BETWEEN ? AND ? ORDER BY recorded_at
                """, arguments: [deviceID, lower, upper]).map { row in
                GeotagRecord(
                    metadata: (try? JSONCoding.decode([String: JSONValue].self, from: Array((row["metadata"] as String).utf8))) ?? [:],
                    location: DeviceLocation(latitude: row["latitude"], longitude: row["longitude"], recordedAt: Self.date(row["recorded_at"]),
                                             accuracy: row["accuracy"]))
            }
            return LocationHistory(deviceID: deviceID, locations: locations, geotags: geotags)
        }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}
