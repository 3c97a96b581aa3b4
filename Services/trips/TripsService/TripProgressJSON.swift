import Bus
import Foundation
import Geo

// A live trip's progress is stored on every location that reaches it (`TripStore.update`):
// written by hand, as JSONEncoder with the platform's settings writes it (the synthesized
// camelCase keys, sorted) — `TripJSONTests` compares the bytes.

extension TripProgress: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.time("arrivedAt", arrivedAt, &out)
        object.key("destination", &out)
        Self.write(destination, to: &out)
        object.number("etaInterval", etaInterval, &out)
        object.time("lastETAAt", lastETAAt, &out)
        object.number("observedSpeed", observedSpeed, &out)
        object.value("odometer", odometer, &out)
        object.end(&out)
    }

    static func write(_ fence: Geofence, to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.key("center", &out)
        write(fence.center, to: &out)
        object.number("radius", fence.radius, &out)
        object.end(&out)
    }

    static func write(_ point: GeoPoint, to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.number("latitude", point.latitude, &out)
        object.number("longitude", point.longitude, &out)
        object.end(&out)
    }
}

extension TrackOdometer: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.number("distance", distance, &out)
        object.value("last", last, &out)
        object.end(&out)
    }
}

extension TrackPoint: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.number("accuracy", accuracy, &out)
        object.key("point", &out)
        TripProgress.write(point, to: &out)
        object.time("recordedAt", recordedAt, &out)
        object.number("speed", speed, &out)
        object.end(&out)
    }
}
