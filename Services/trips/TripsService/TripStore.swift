import Bus
import Foundation
import GRDB
import RideModels
import Storage

/// Trips in one SQLite file: each trip's document, its live progress (so a restart resumes it),
/// and the outbox of `trip.*` events.
public final class TripStore: Sendable {
    public let database: DatabasePool

    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: true)
    }

    /// The schema, one migration per version (the outbox table comes with the first).
    static let migrations: [ServiceDatabase.Migration] = [("v1", """
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
                """)]

    /// A live trip: what apps see and what the watcher keeps.
    public struct Live: Sendable, Equatable {
        public var trip: Trip
        public var progress: TripProgress

        /// Writes what `signal` says into the trip's document; returns the `trip.*` event it makes.
        mutating func apply(_ signal: TripSignal) -> String {
            switch signal {
            case .arrived(let at, _):
                trip.destination.arrivedAt = at
                trip.estimate = nil
                return "destination_arrival"
            case .eta(let estimate):
                trip.estimate = Trip.Estimate(arriveAt: estimate.arriveAt, route: .init(distance: estimate.distance, duration: estimate.duration,
                                                                                       remainingDuration: estimate.duration))
                return "eta"
            }
        }
    }

    /// Stores a new trip and its `trip.created` event; with an idempotency key already used,
    /// returns the trip made then (and `created` false) and stores nothing.
    public func create(_ live: Live, idempotencyKey: String?) async throws -> (trip: Trip, created: Bool) {
        try await database.write { db in
            if let idempotencyKey,
               let existing = try db.value(String.self, "SELECT document FROM trips WHERE idempotency_key = ?", [idempotencyKey]) {
                return (try JSONCoding.decode(Trip.self, fromText: existing), false)
            }
            try db.run("INSERT INTO trips (id, share_id, device_id, status, idempotency_key, document, progress) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [live.trip.tripID, live.trip.shareID, live.trip.deviceID, live.trip.status.rawValue, idempotencyKey,
                                       try JSONCoding.encodeText(live.trip), try JSONCoding.encodeText(live.progress)])
            try Self.appendEvent(db, "created", live.trip)
            // The first estimate is news too: a rider's app shows an ETA as soon as the trip starts,
            // not one rate-limit interval later.
            if live.trip.estimate != nil { try Self.appendEvent(db, "eta", live.trip) }
            // Already there when the trip starts (a driver waiting at the pickup): the arrival is
            // an event like any other, or whoever waits for it would wait forever.
            if live.trip.destination.arrivedAt != nil { try Self.appendEvent(db, "destination_arrival", live.trip) }
            return (live.trip, true)
        }
    }

    public func trip(id: String) async throws -> Trip? {
        try await database.read { db in try db.value(String.self, "SELECT document FROM trips WHERE id = ?", [id]).map { try JSONCoding.decode(Trip.self, fromText: $0) } }
    }

    public func trip(shareID: String) async throws -> Trip? {
        try await database.read { db in try String.fetchOne(db, sql: "SELECT document FROM trips WHERE share_id = ?", arguments: [shareID]).map { try JSONCoding.decode(Trip.self, fromText: $0) } }
    }

    /// Active trips: all of them, or the one with `id` (none when it is not active).
    public func activeTrips(id: String? = nil) async throws -> [Live] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT document, progress FROM trips WHERE status = 'active' AND (? IS NULL OR id = ?)", arguments: [id, id]).map { row in
                Live(trip: try JSONCoding.decode(Trip.self, fromText: row["document"]), progress: try JSONCoding.decode(TripProgress.self, fromText: row["progress"]))
            }
        }
    }

    /// Saves a live trip's progress and, with `event`, its changed document and that event — only
    /// while the trip is still active (a late location after completion changes nothing).
    /// Arrival is recorded at most once: a second arrival for the same trip finds `arrived_at` set.
    @discardableResult
    public func update(_ live: Live, event: String?) async throws -> Bool {
        try await database.write { db in
            // SQLite reads the one field instead of this process decoding the whole document.
            guard let arrived = try db.value(Bool.self, """
                SELECT json_extract(document, '$.destination.arrived_at') IS NOT NULL FROM trips WHERE id = ? AND status = 'active'
                """, [live.trip.tripID]) else {
                return false
            }
            // Arrived already (seen by another instance watching the same trip): this copy is stale.
            if arrived, event == "destination_arrival" || live.trip.destination.arrivedAt == nil { return false }
            try db.run("UPDATE trips SET document = ?, progress = ? WHERE id = ?",
                       [try JSONCoding.encodeText(live.trip), try JSONCoding.encodeText(live.progress), live.trip.tripID])
            if let event { try Self.appendEvent(db, event, live.trip) }
            return true
        }
    }

    /// Completes a trip with its summary and the `trip.completed` event; an already completed
    /// trip is returned as it is.
    public func complete(id: String, at time: Date, summary: TripSummary) async throws -> Trip? {
        try await database.write { db in
            guard let document = try db.value(String.self, "SELECT document FROM trips WHERE id = ?", [id]) else { return nil }
            var trip = try JSONCoding.decode(Trip.self, fromText: document)
            guard trip.status == .active else { return trip }
            trip.status = .completed
            trip.completedAt = time
            trip.summary = summary
            trip.estimate = nil
            try db.run("UPDATE trips SET status = ?, document = ? WHERE id = ?", [trip.status.rawValue, try JSONCoding.encodeText(trip), id])
            try Self.appendEvent(db, "completed", trip)
            return trip
        }
    }

    static func appendEvent(_ db: Database, _ value: String, _ trip: Trip) throws {
        let data = TripEvent.Data(value: value, tripID: trip.tripID, tripMetadata: trip.metadata, estimate: value == "eta" ? trip.estimate : nil,
                                  summary: value == "completed" ? trip.summary : nil, arrivedAt: trip.destination.arrivedAt)
        let topic = "trip.\(value)"
        try Outbox.append(db, topic: topic, type: topic, data: TripEvent(createdAt: Date(), deviceID: trip.deviceID, data: data))
    }

}
