import Bus
import Foundation
import Geo

// Orders written by hand: ride-orders encodes every order it changes, stores and replies (a
// quarter of its CPU went to JSONEncoder in `ridectl bench lifecycle`). Keys in JSONCoding's
// order (sorted by UTF-8 bytes), absent optionals left out. OrderJSONTests compares the bytes
// with JSONEncoder's.

extension Order: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("cancel_reason", cancelReason, &out)
        object.time("created_at", createdAt, &out)
        object.strings("declined_by", declinedBy, &out)
        object.integer("dispatch_round", dispatchRound, &out)
        object.value("driver", driver, &out)
        object.value("dropoff", dropoff, &out)
        object.value("fare", fare, &out)
        object.string("id", id, &out)
        object.strings("offer_history", offerHistory, &out)
        object.time("offered_at", offeredAt, &out)
        object.strings("offered_to", offeredTo, &out)
        object.value("pickup", pickup, &out)
        object.value("rating_by_driver", ratingByDriver, &out)
        object.value("rating_by_rider", ratingByRider, &out)
        object.value("rider", rider, &out)
        object.string("status", status.rawValue, &out)
        object.value("summary", summary, &out)
        object.number("surge", surge, &out)
        object.string("trip_id", tripID, &out)
        object.time("updated_at", updatedAt, &out)
        object.integer("version", version, &out)
        object.end(&out)
    }
}

/// A bare point (a trip's stored progress: its destination's centre, its last counted fix).
extension GeoPoint: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.number("latitude", latitude, &out)
        object.number("longitude", longitude, &out)
        object.end(&out)
    }
}

extension Place: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("address", address, &out)
        object.number("latitude", latitude, &out)
        object.number("longitude", longitude, &out)
        object.end(&out)
    }
}

extension User: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.value("car", car, &out)
        object.time("created_at", createdAt, &out)
        object.string("device_id", deviceID, &out)
        object.string("id", id, &out)
        object.string("name", name, &out)
        object.string("phone_number", phoneNumber, &out)
        object.raw("rating", rating.flatMap { try? JSONCoding.encode($0) }, &out)
        object.string("role", role.rawValue, &out)
        object.end(&out)
    }
}

extension Car: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("license_plate", licensePlate, &out)
        object.string("model", model, &out)
        object.end(&out)
    }
}

// A completed order's parts: once per ride, in the COMPLETED event every follower reads.

extension Fare: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("currency", currency, &out)
        object.integer("distance_m", distanceMetres, &out)
        object.integer("duration_s", durationSeconds, &out)
        object.number("surge", surge, &out)
        object.integer("total_cents", totalCents, &out)
        object.end(&out)
    }
}

extension RatingGiven: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("comment", comment, &out)
        object.time("created_at", createdAt, &out)
        object.integer("stars", stars, &out)
        object.end(&out)
    }
}

// The riders' and drivers' requests of a ride (create, accept, start_ride, end_ride), sent by
// the gateway, the simulator and the benchmark, read by ride-orders: four a ride.

extension Caller: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.string("id", id, &out)
        object.string("role", role.rawValue, &out)
        object.end(&out)
    }
}

extension OrderParams: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.value("caller", caller, &out)
        object.string("id", id, &out)
        object.string("reason", reason, &out)
        object.end(&out)
    }
}

extension CreateOrderParams: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.value("caller", caller, &out)
        object.value("dropoff", dropoff, &out)
        object.string("dropoff_place_id", dropoffPlaceID, &out)
        object.value("pickup", pickup, &out)
        object.string("pickup_place_id", pickupPlaceID, &out)
        object.end(&out)
    }
}
