import Bus
import Foundation
import GRDB
import RideContract
import RideModels
import Storage
import Wire

/// Trips in one SQLite file: each trip's document, its live progress (so a restart resumes it),
/// and the outbox of `trip.*` events.
public final class TripStore: TripStorage, SQLiteServiceStore {
    public let database: DatabasePool
    /// The hot writes (each with its outbox event) are committed in groups.
    let writes: GroupCommit

    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: true)
        writes = GroupCommit(database: database)
    }

    /// The schema, one migration per version (the outbox table comes with the first).
    static let migrations: [ServiceDatabase.Migration] = [
        (
            "v1",
            """
            CREATE TABLE trips (
                id TEXT PRIMARY KEY NOT NULL,
                share_id TEXT NOT NULL UNIQUE,
                device_id TEXT NOT NULL,
                status TEXT NOT NULL,
                idempotency_key TEXT UNIQUE,
                document TEXT NOT NULL,
                progress TEXT NOT NULL
            );
            CREATE INDEX trips_active ON trips (status, device_id);
            """
        ),
        // The keyed requests answered (idempotency keys), kept 24 hours.
        ("v2", RequestTable.sql),
        ("v3", Outbox.traceColumnsSQL),
    ]

    public func create(_ live: LiveTrip, idempotencyKey: String?) async throws -> (trip: Trip, created: Bool) {
        try await writes.write { db in
            if let idempotencyKey,
                let existing = try db.value(String.self, "SELECT document FROM trips WHERE idempotency_key = ?", [idempotencyKey])
            {
                return (try JSONCoding.decode(Trip.self, fromText: existing), false)
            }
            try db.run(
                "INSERT INTO trips (id, share_id, device_id, status, idempotency_key, document, progress) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    live.trip.tripID, live.trip.shareID, live.trip.deviceID, live.trip.status.rawValue, idempotencyKey,
                    try JSONCoding.encodeText(live.trip), try JSONCoding.encodeText(live.progress),
                ])
            for event in TripStorageRules.creationEvents(live.trip) { try Self.appendEvent(db, event, live.trip) }
            return (live.trip, true)
        }
    }

    public func trip(id: String) async throws -> Trip? {
        guard TripStorageRules.isStorable(id) else { return nil }
        return try await database.read { db in
            try db.value(String.self, "SELECT document FROM trips WHERE id = ?", [id]).map {
                try JSONCoding.decode(Trip.self, fromText: $0)
            }
        }
    }

    public func trip(shareID: String) async throws -> Trip? {
        guard TripStorageRules.isStorable(shareID) else { return nil }
        return try await database.read { db in
            try db.value(String.self, "SELECT document FROM trips WHERE share_id = ?", [shareID]).map {
                try JSONCoding.decode(Trip.self, fromText: $0)
            }
        }
    }

    /// One active trip, by its key: not a scan of every active trip testing the id on each, which is
    /// what `(? IS NULL OR id = ?)` made of it (every live document read for each trip event).
    static let activeTripByID = "SELECT document, progress FROM trips WHERE id = ? AND status = 'active'"

    public func activeTrips(id: String?) async throws -> [LiveTrip] {
        if let id, !TripStorageRules.isStorable(id) { return [] }
        return try await database.read { db in
            let rows =
                if let id {
                    try Row.fetchAll(db.cachedStatement(sql: Self.activeTripByID), arguments: [id])
                } else {
                    try Row.fetchAll(db.cachedStatement(sql: "SELECT document, progress FROM trips WHERE status = 'active'"))
                }
            return try rows.map { row in
                LiveTrip(
                    trip: try JSONCoding.decode(Trip.self, fromText: row["document"]),
                    progress: try JSONCoding.decode(TripProgress.self, fromText: row["progress"]))
            }
        }
    }

    public func activeTripIDs() async throws -> Set<String> {
        try await database.read { db in Set(try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM trips WHERE status = 'active'"))) }
    }

    public func save(_ live: LiveTrip, events: [EventKind<TripEvent>], accepts: @escaping @Sendable (Trip.Destination) -> Bool)
        async throws -> Bool
    {
        try await writes.write { db in
            // SQLite reads the one field instead of this process decoding the whole document.
            guard
                let destination = try db.value(
                    String.self, "SELECT json_extract(document, '$.destination') FROM trips WHERE id = ? AND status = 'active'",
                    [live.trip.tripID])
            else {
                return false
            }
            guard accepts(try JSONCoding.decode(Trip.Destination.self, fromText: destination)) else { return false }
            try db.run(
                "UPDATE trips SET document = ?, progress = ? WHERE id = ?",
                [try JSONCoding.encodeText(live.trip), try JSONCoding.encodeText(live.progress), live.trip.tripID])
            for event in events { try Self.appendEvent(db, event, live.trip) }
            return true
        }
    }

    public func complete(id: String, at time: Date, summary: TripSummary) async throws -> Trip? {
        guard TripStorageRules.isStorable(id) else { return nil }
        return try await writes.write { db in
            guard let document = try db.value(String.self, "SELECT document FROM trips WHERE id = ?", [id]) else { return nil }
            let stored = try JSONCoding.decode(Trip.self, fromText: document)
            guard stored.status == .active else { return stored }
            let trip = TripStorageRules.completed(stored, at: time, summary: summary)
            try db.run(
                "UPDATE trips SET status = ?, document = ? WHERE id = ?", [trip.status.rawValue, try JSONCoding.encodeText(trip), id])
            try Self.appendEvent(db, Events.tripCompleted, trip)
            return trip
        }
    }

    static func appendEvent(_ db: Database, _ kind: EventKind<TripEvent>, _ trip: Trip) throws {
        let (topic, event) = TripStorageRules.event(kind, trip)
        try Outbox.append(db, topic: topic, type: topic, data: event)
    }
}
