import Bus
import Foundation
import Logging
import PostgresNIO
import RideContract
import RideModels
import Storage
import Wire

/// Trips in the `trips` schema of a shared PostgreSQL database: what several `ride-trips`
/// instances use together. Same tables and rules as `TripStore`; where SQLite's single writer made
/// a check-then-write safe, this store lets the database decide (a conflict on the idempotency
/// key, a row lock on the trip that changes), so every instance watching a trip may report its
/// arrival or complete it and the event is still stored once.
public final class PostgresTripStore: TripStorage, PostgresServiceStore {
    public let postgres: PostgresSchema

    public static let defaultSchema = "trips"
    public static let keepsOutbox = true

    public init(postgres: PostgresSchema) {
        self.postgres = postgres
    }

    /// The SQLite store's schema, translated.
    public static let migrations = PostgresSchema.translated(TripStore.migrations)

    public func create(_ live: LiveTrip, idempotencyKey: String?) async throws -> (trip: Trip, created: Bool) {
        let logger = logger
        let (document, progress) = (try JSONCoding.encodeText(live.trip), try JSONCoding.encodeText(live.progress))
        return try await postgres.write { connection in
            // Two instances given the same key at once: the second waits for the first's commit
            // here and inserts nothing. A trip without a key (NULL) never conflicts.
            let inserted = try await connection.run(
                """
                INSERT INTO trips (id, share_id, device_id, status, idempotency_key, document, progress)
                VALUES (\(live.trip.tripID), \(live.trip.shareID), \(live.trip.deviceID), \(live.trip.status.rawValue), \(idempotencyKey),
                        \(document), \(progress))
                ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1
                """, logger: logger)
            guard inserted == 1 else {
                guard let idempotencyKey,
                    let existing = try await connection.first(
                        "SELECT document FROM trips WHERE idempotency_key = \(idempotencyKey)", as: String.self, logger: logger)
                else {
                    throw ServiceError(
                        status: 500, code: "internal",
                        message: "trip \(live.trip.tripID) was neither stored nor found by its idempotency key")
                }
                return (try JSONCoding.decode(Trip.self, fromText: existing), false)
            }
            for event in TripStorageRules.creationEvents(live.trip) {
                try await Self.appendEvent(connection, event, live.trip, logger: logger)
            }
            return (live.trip, true)
        }
    }

    public func trip(id: String) async throws -> Trip? {
        guard TripStorageRules.isStorable(id) else { return nil }
        return try await document("SELECT document FROM trips WHERE id = \(id)")
    }

    public func trip(shareID: String) async throws -> Trip? {
        guard TripStorageRules.isStorable(shareID) else { return nil }
        return try await document("SELECT document FROM trips WHERE share_id = \(shareID)")
    }

    private func document(_ query: PostgresQuery) async throws -> Trip? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(query, as: String.self, logger: logger).map { try JSONCoding.decode(Trip.self, fromText: $0) }
        }
    }

    public func activeTrips(id: String?) async throws -> [LiveTrip] {
        if let id, !TripStorageRules.isStorable(id) { return [] }
        let logger = logger
        let query: PostgresQuery =
            if let id {
                "SELECT document, progress FROM trips WHERE status = 'active' AND id = \(id)"
            } else {
                "SELECT document, progress FROM trips WHERE status = 'active'"
            }
        return try await postgres.read { connection in
            try await connection.all(query, as: (String, String).self, logger: logger).map { row in
                LiveTrip(
                    trip: try JSONCoding.decode(Trip.self, fromText: row.0),
                    progress: try JSONCoding.decode(TripProgress.self, fromText: row.1))
            }
        }
    }

    public func activeTripIDs() async throws -> Set<String> {
        let logger = logger
        return try await postgres.read { connection in
            Set(try await connection.all("SELECT id FROM trips WHERE status = 'active'", as: String.self, logger: logger))
        }
    }

    public func save(_ live: LiveTrip, events: [EventKind<TripEvent>], accepts: @escaping @Sendable (Trip.Destination) -> Bool)
        async throws -> Bool
    {
        let logger = logger
        let (document, progress) = (try JSONCoding.encodeText(live.trip), try JSONCoding.encodeText(live.progress))
        return try await postgres.write { connection in
            // The row locked: every instance watches every active trip, so two may see the arrival
            // at once; the second reads the first's commit (or no row, once completed) and stops.
            // The document is decoded here, not read with a JSON operator: jsonb refuses a "\u0000"
            // that a trip's metadata may hold.
            guard
                let stored = try await connection.first(
                    "SELECT document FROM trips WHERE id = \(live.trip.tripID) AND status = 'active' FOR UPDATE", as: String.self,
                    logger: logger)
            else {
                return false
            }
            guard accepts(try JSONCoding.decode(Trip.self, fromText: stored).destination) else { return false }
            try await connection.run(
                "UPDATE trips SET document = \(document), progress = \(progress) WHERE id = \(live.trip.tripID)", logger: logger)
            for event in events { try await Self.appendEvent(connection, event, live.trip, logger: logger) }
            return true
        }
    }

    public func complete(id: String, at time: Date, summary: TripSummary) async throws -> Trip? {
        guard TripStorageRules.isStorable(id) else { return nil }
        let logger = logger
        return try await postgres.write { connection in
            // The row locked: a second complete (from another instance) waits, then finds it completed.
            guard
                let document = try await connection.first(
                    "SELECT document FROM trips WHERE id = \(id) FOR UPDATE", as: String.self, logger: logger)
            else {
                return nil
            }
            let stored = try JSONCoding.decode(Trip.self, fromText: document)
            guard stored.status == .active else { return stored }
            let trip = TripStorageRules.completed(stored, at: time, summary: summary)
            try await connection.run(
                "UPDATE trips SET status = \(trip.status.rawValue), document = \(try JSONCoding.encodeText(trip)) WHERE id = \(id)",
                logger: logger)
            try await Self.appendEvent(connection, Events.tripCompleted, trip, logger: logger)
            return trip
        }
    }

    private static func appendEvent(_ connection: PostgresConnection, _ kind: EventKind<TripEvent>, _ trip: Trip, logger: Logger)
        async throws
    {
        let (topic, event) = TripStorageRules.event(kind, trip)
        try await PostgresOutbox.append(connection, topic: topic, type: topic, data: event, logger: logger)
    }
}
