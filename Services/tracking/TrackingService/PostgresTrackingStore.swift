import Bus
import Dispatch
import Foundation
import Logging
import PostgresNIO
import RideModels
import Storage
import Synchronization
import Wire

/// Tracking's tables in the `tracking` schema of a shared PostgreSQL database (`--database-url`):
/// the devices and their history outlive the machine a shard ran on, and every shard of a
/// platform keeps them in the same tables — a shard loads only the devices it owns.
///
/// The history is written in bulk: one `INSERT … SELECT FROM UNNEST(arrays)` per group commit
/// for all its locations (a round trip per location would cap ingest at a few thousand a
/// second). postgres-nio binds arrays of plain values, not of optionals, so an absent reading
/// travels as NaN (−1 for `mocked`) and becomes NULL again in the statement.
public final class PostgresTrackingStore: TrackingStore, PostgresSchemaStore {
    public let postgres: PostgresSchema

    public static let defaultSchema = "tracking"
    public static let keepsOutbox = false

    public init(postgres: PostgresSchema) {
        self.postgres = postgres
    }

    /// The SQLite store's tables in PostgreSQL's words: booleans, and a geotag id the database
    /// numbers itself (SQLite's `INTEGER PRIMARY KEY` does that implicitly).
    public static let migrations: [PostgresSchema.Migration] =
        [
            (
                "v1",
                """
                CREATE TABLE devices (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT,
                    metadata TEXT NOT NULL,
                    available BOOLEAN NOT NULL,
                    tracking BOOLEAN NOT NULL,
                    intents_changed_at BIGINT NOT NULL,
                    activity TEXT NOT NULL,
                    last_seen BIGINT,
                    sequence BIGINT NOT NULL,
                    latest_latitude DOUBLE PRECISION,
                    latest_longitude DOUBLE PRECISION,
                    latest_recorded_at BIGINT,
                    latest_accuracy DOUBLE PRECISION,
                    latest_speed DOUBLE PRECISION,
                    latest_bearing DOUBLE PRECISION
                );
                CREATE TABLE locations (
                    device_id TEXT NOT NULL,
                    recorded_at BIGINT NOT NULL,
                    latitude DOUBLE PRECISION NOT NULL,
                    longitude DOUBLE PRECISION NOT NULL,
                    accuracy DOUBLE PRECISION,
                    speed DOUBLE PRECISION,
                    bearing DOUBLE PRECISION,
                    altitude DOUBLE PRECISION,
                    mocked BIGINT,
                    PRIMARY KEY (device_id, recorded_at)
                );
                CREATE TABLE geotags (
                    id BIGSERIAL PRIMARY KEY,
                    device_id TEXT NOT NULL,
                    recorded_at BIGINT NOT NULL,
                    latitude DOUBLE PRECISION NOT NULL,
                    longitude DOUBLE PRECISION NOT NULL,
                    accuracy DOUBLE PRECISION,
                    metadata TEXT NOT NULL,
                    UNIQUE (device_id, recorded_at, metadata)
                );
                CREATE INDEX geotags_by_device_time ON geotags (device_id, recorded_at);
                """
            ),
            (
                "v2",
                """
                ALTER TABLE devices ADD COLUMN platform_tracking BOOLEAN NOT NULL DEFAULT FALSE;
                ALTER TABLE devices ADD COLUMN platform_tracking_at BIGINT;
                """
            ),
        ] + PostgresSchema.translated([("v3", RequestTable.sql)])

    public var requestLog: any RequestLog { PostgresRequestLog(postgres: postgres) }

    public func loadDevices() async throws -> [DeviceRecord] { try await load(ids: nil) }

    public func loadDevices(ids: [String]) async throws -> [DeviceRecord] { try await load(ids: ids) }

    /// nil: every device.
    private func load(ids: [String]?) async throws -> [DeviceRecord] {
        let logger = logger
        let columns = """
            SELECT id, name, metadata, available, tracking, intents_changed_at, activity, last_seen, sequence,
                   latest_latitude, latest_longitude, latest_recorded_at, latest_accuracy, latest_speed, latest_bearing,
                   platform_tracking, platform_tracking_at
            FROM devices
            """
        let query: PostgresQuery = ids.map { "\(unescaped: columns) WHERE id = ANY(\($0))" } ?? PostgresQuery(unsafeSQL: columns)
        return try await postgres.read { connection in
            let rows = try await connection.all(
                query,
                as: (
                    String, String?, String, Bool, Bool, Int64, String, Int64?, Int64,
                    Double?, Double?, Int64?, Double?, Double?, Double?, Bool, Int64?
                ).self, logger: logger)
            return rows.map { row in
                var record = DeviceRecord(id: row.0)
                record.name = row.1
                record.metadata = (try? JSONCoding.decode([String: JSONValue].self, from: Array(row.2.utf8))) ?? [:]
                record.available = row.3
                record.tracking = row.4
                record.intentsChangedAt = SQLiteTrackingStore.date(row.5)
                record.activity = DeviceActivity(rawValue: row.6) ?? .inactive
                record.lastSeen = row.7.map(SQLiteTrackingStore.date)
                record.sequence = UInt64(max(0, row.8))
                record.platformTracking = row.15
                record.platformTrackingAt = row.16.map(SQLiteTrackingStore.date)
                if let latitude = row.9, let longitude = row.10, let recordedAt = row.11 {
                    record.latest = DeviceLocation(
                        latitude: latitude, longitude: longitude, recordedAt: SQLiteTrackingStore.date(recordedAt),
                        accuracy: row.12, speed: row.13, bearing: row.14)
                }
                return record
            }
        }
    }

    /// Called on the writer's own thread (not the cooperative pool), which waits here for the
    /// transaction. It cannot wait for good: every PostgreSQL call is answered within the schema's
    /// call deadline (then 503: the batches are refused and the phones send them again).
    public func commit(_ writes: [TrackingWrite]) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await store(writes)
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }!.get()
    }

    /// One transaction of a few statements, however many devices it holds: with the database a
    /// network hop away, each statement costs a round trip, and a group commit of 200 devices made
    /// of a statement per device held the writer for seconds (20 ms between hosts: 8 s a commit).
    /// A device written twice in the group is written once, from its last record (each record is
    /// the device's whole state); its name, metadata and intents too if any of its writes changed them.
    func store(_ writes: [TrackingWrite]) async throws {
        let logger = logger
        let devices = DeviceColumns(writes)
        try await postgres.write { connection in
            for record in devices.changed {
                let latest = record.latest
                let (lastSeen, sequence) = (record.lastSeen.map(SQLiteTrackingStore.milliseconds), Int64(record.sequence))
                let (latitude, longitude, recordedAt) = (
                    latest?.latitude, latest?.longitude, latest.map { SQLiteTrackingStore.milliseconds($0.recordedAt) }
                )
                let (accuracy, speed, bearing) = (latest?.accuracy, latest?.speed, latest?.bearing)
                let metadata = String(decoding: JSONValue.object(record.metadata).jsonBytes, as: UTF8.self)
                let platformTrackingAt = record.platformTrackingAt.map(SQLiteTrackingStore.milliseconds)
                try await connection.run(
                    """
                    INSERT INTO devices (\(unescaped: DeviceUpsertSQL.columns))
                    VALUES (\(record.id), \(record.name), \(metadata), \(record.available), \(record.tracking),
                        \(SQLiteTrackingStore.milliseconds(record.intentsChangedAt)), \(record.activity.rawValue), \(lastSeen), \(sequence),
                        \(latitude), \(longitude), \(recordedAt), \(accuracy), \(speed), \(bearing),
                        \(record.platformTracking), \(platformTrackingAt))
                    \(unescaped: DeviceUpsertSQL.onConflict)
                    """, logger: logger)
            }
            if !devices.ids.isEmpty {
                let none = DeviceColumns.absent
                try await connection.run(
                    """
                    UPDATE devices SET activity = batch.activity, last_seen = NULLIF(batch.last_seen, \(none)), sequence = batch.sequence,
                        latest_latitude = NULLIF(batch.latitude, 'NaN'), latest_longitude = NULLIF(batch.longitude, 'NaN'),
                        latest_recorded_at = NULLIF(batch.recorded_at, \(none)), latest_accuracy = NULLIF(batch.accuracy, 'NaN'),
                        latest_speed = NULLIF(batch.speed, 'NaN'), latest_bearing = NULLIF(batch.bearing, 'NaN')
                    FROM UNNEST(\(devices.ids)::text[], \(devices.activities)::text[], \(devices.lastSeen)::bigint[], \(devices.sequences)::bigint[],
                                \(devices.latitudes)::float8[], \(devices.longitudes)::float8[], \(devices.recordedAt)::bigint[],
                                \(devices.accuracies)::float8[], \(devices.speeds)::float8[], \(devices.bearings)::float8[])
                         AS batch(id, activity, last_seen, sequence, latitude, longitude, recorded_at, accuracy, speed, bearing)
                    WHERE devices.id = batch.id AND devices.sequence <= batch.sequence
                    """, logger: logger)
            }
            for write in writes {
                for geotag in write.geotags {
                    let metadata = String(decoding: JSONValue.object(geotag.metadata).jsonBytes, as: UTF8.self)
                    try await connection.run(
                        """
                        INSERT INTO geotags (device_id, recorded_at, latitude, longitude, accuracy, metadata)
                        VALUES (\(write.record.id), \(SQLiteTrackingStore.milliseconds(geotag.location.recordedAt)), \(geotag.location.latitude),
                            \(geotag.location.longitude), \(geotag.location.accuracy), \(metadata))
                        ON CONFLICT (device_id, recorded_at, metadata) DO NOTHING
                        """, logger: logger)
                }
            }
            let columns = LocationColumns(writes)
            guard !columns.devices.isEmpty else { return }
            try await connection.run(
                """
                INSERT INTO locations (device_id, recorded_at, latitude, longitude, accuracy, speed, bearing, altitude, mocked)
                SELECT device, at, latitude, longitude, NULLIF(accuracy, 'NaN'), NULLIF(speed, 'NaN'), NULLIF(bearing, 'NaN'),
                       NULLIF(altitude, 'NaN'), NULLIF(mocked, -1)
                FROM UNNEST(\(columns.devices)::text[], \(columns.times)::bigint[], \(columns.latitudes)::float8[], \(columns.longitudes)::float8[],
                            \(columns.accuracies)::float8[], \(columns.speeds)::float8[], \(columns.bearings)::float8[],
                            \(columns.altitudes)::float8[], \(columns.mocked)::bigint[])
                     AS batch(device, at, latitude, longitude, accuracy, speed, bearing, altitude, mocked)
                ON CONFLICT (device_id, recorded_at) DO NOTHING
                """, logger: logger)
        }
    }

    public func history(deviceID: String, from: Date?, to: Date?, limit: Int) async throws -> LocationHistory {
        let lower = from.map(SQLiteTrackingStore.milliseconds) ?? Int64.min
        let upper = to.map(SQLiteTrackingStore.milliseconds) ?? Int64.max
        let logger = logger
        return try await postgres.read { connection in
            let locations = try await connection.all(
                """
                SELECT recorded_at, latitude, longitude, accuracy, speed, bearing, altitude, mocked FROM locations
                WHERE device_id = \(deviceID) AND recorded_at BETWEEN \(lower) AND \(upper) ORDER BY recorded_at LIMIT \(Int64(limit))
                """, as: (Int64, Double, Double, Double?, Double?, Double?, Double?, Int64?).self, logger: logger
            ).map { row in
                DeviceLocation(
                    latitude: row.1, longitude: row.2, recordedAt: SQLiteTrackingStore.date(row.0), accuracy: row.3, speed: row.4,
                    bearing: row.5, altitude: row.6, mocked: row.7.map { $0 != 0 })
            }
            let geotags = try await connection.all(
                """
                SELECT recorded_at, latitude, longitude, accuracy, metadata FROM geotags
                WHERE device_id = \(deviceID) AND recorded_at BETWEEN \(lower) AND \(upper) ORDER BY recorded_at
                """, as: (Int64, Double, Double, Double?, String).self, logger: logger
            ).map { row in
                GeotagRecord(
                    metadata: (try? JSONCoding.decode([String: JSONValue].self, from: Array(row.4.utf8))) ?? [:],
                    location: DeviceLocation(
                        latitude: row.1, longitude: row.2, recordedAt: SQLiteTrackingStore.date(row.0), accuracy: row.3))
            }
            return LocationHistory(deviceID: deviceID, locations: locations, geotags: geotags)
        }
    }

    public func close() { postgres.close() }
}
