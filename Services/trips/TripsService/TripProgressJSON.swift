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
        object.value("destination", destination, &out)
        object.number("etaInterval", etaInterval, &out)
        object.time("lastETAAt", lastETAAt, &out)
        object.number("observedSpeed", observedSpeed, &out)
        object.value("odometer", odometer, &out)
        object.end(&out)
    }
}

extension Geofence: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        var object = JSONObjectWriter(&out)
        object.value("center", center, &out)
        object.number("radius", radius, &out)
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
        object.value("point", point, &out)
        object.time("recordedAt", recordedAt, &out)
        object.number("speed", speed, &out)
        object.end(&out)
    }
}
