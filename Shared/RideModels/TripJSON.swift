import Bus
import Foundation

// Trips written by hand: ride-trips encodes a trip for every reply, every stored row and every
// `trip.*` event, and JSONEncoder took a fifth of its CPU in `ridectl bench lifecycle`. Keys in
// JSONCoding's order (sorted by UTF-8 bytes), absent optionals left out. TripJSONTests compares
// the bytes with JSONEncoder's.

extension Trip: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.time("completed_at", completedAt, &out)
        object.value("destination", destination, &out)
        object.string("device_id", deviceID, &out)
        object.value("estimate", estimate, &out)
        object.members("metadata", metadata, &out)
        object.string("share_id", shareID, &out)
        object.time("started_at", startedAt, &out)
        object.string("status", status.rawValue, &out)
        object.value("summary", summary, &out)
        object.string("trip_id", tripID, &out)
        object.value("views", views, &out)
        object.end(&out)
    }
}

extension Trip.Destination: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("address", address, &out)
        object.time("arrived_at", arrivedAt, &out)
        object.value("geometry", geometry, &out)
        object.number("radius", radius, &out)
        object.end(&out)
    }
}

extension Trip.Views: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("share_url", shareURL, &out)
        object.end(&out)
    }
}

extension Trip.Estimate: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.time("arrive_at", arriveAt, &out)
        object.value("route", route, &out)
        object.end(&out)
    }
}

extension Trip.Estimate.Route: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.integer("distance", distance, &out)
        object.integer("duration", duration, &out)
        object.integer("remaining_duration", remainingDuration, &out)
        object.end(&out)
    }
}

extension TripSummary: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.time("completed_at", completedAt, &out)
        object.string("device_id", deviceID, &out)
        object.integer("distance", distance, &out)
        object.integer("duration", duration, &out)
        object.value("locations", locations, &out)
        object.values("markers", markers, &out)
        object.time("started_at", startedAt, &out)
        object.end(&out)
    }
}

extension TripSummary.LineString: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.key("coordinates", &out)
        EnvelopeWriter.appendArray(coordinates, to: &out) { position, out in
            EnvelopeWriter.appendArray(position, to: &out) { EnvelopeWriter.appendNumber($0, to: &$1) }
        }
        object.string("type", type, &out)
        object.end(&out)
    }
}

extension TripSummary.Marker: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.value("location", location, &out)
        object.time("recorded_at", recordedAt, &out)
        object.string("type", type, &out)
        object.end(&out)
    }
}

extension TripEvent: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.time("created_at", createdAt, &out)
        object.value("data", data, &out)
        object.string("device_id", deviceID, &out)
        object.string("type", type, &out)
        object.string("version", version, &out)
        object.end(&out)
    }
}

extension TripEvent.Data: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.time("arrived_at", arrivedAt, &out)
        object.value("estimate", estimate, &out)
        object.value("summary", summary, &out)
        object.string("trip_id", tripID, &out)
        object.members("trip_metadata", tripMetadata, &out)
        object.string("value", value, &out)
        object.end(&out)
    }
}

// The orders reactor's requests to trips, two creates and a complete per ride.

extension CreateTripParams: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.value("destination", destination, &out)
        object.string("device_id", deviceID, &out)
        object.string("idempotency_key", idempotencyKey, &out)
        object.members("metadata", metadata, &out)
        object.end(&out)
    }
}

extension CreateTripParams.Destination: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("address", address, &out)
        object.value("geometry", geometry, &out)
        object.number("radius", radius, &out)
        object.end(&out)
    }
}

extension TripIDParams: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("trip_id", tripID, &out)
        object.end(&out)
    }
}
