import Bus
import Foundation
import Geo
import RideModels

/// The rules a location must meet to be stored, indexed and published. Each refusal names the field
/// (`locations[3].latitude`) and says what is wrong; the good locations of the batch still count.
public struct LocationRules: Sendable {
    /// A fix may be stamped this far in the future (device clocks drift).
    public var futureTolerance: TimeInterval = 300
    /// Fixes older than this are history, not tracking: refused.
    public var maximumAge: TimeInterval = 7 * 24 * 3600
    /// Metres; a fix less precise than this is not a position.
    public var maximumAccuracy: Double = 5000
    /// Metres per second (360 km/h).
    public var maximumSpeed: Double = 100
    /// Locations and geotags per batch.
    public var maximumBatchSize = 1000

    public init() {}

    /// Checks one location; the problem as (field suffix, reason), or nil when it is fine.
    public func problem(with location: DeviceLocation, now: Date) -> (field: String, reason: String)? {
        guard location.latitude.isFinite, (-90...90).contains(location.latitude) else {
            return ("latitude", "must be a number from -90 to 90, got \(location.latitude)")
        }
        guard location.longitude.isFinite, (-180...180).contains(location.longitude) else {
            return ("longitude", "must be a number from -180 to 180, got \(location.longitude)")
        }
        let age = now.timeIntervalSince(location.recordedAt)
        guard age >= -futureTolerance else {
            return ("recorded_at", "is \(Int(-age)) s in the future (at most \(Int(futureTolerance)) s allowed)")
        }
        guard age <= maximumAge else {
            return ("recorded_at", "is older than \(Int(maximumAge / 86400)) days")
        }
        if let accuracy = location.accuracy, !(accuracy.isFinite && accuracy >= 0 && accuracy <= maximumAccuracy) {
            return ("accuracy", "must be from 0 to \(Int(maximumAccuracy)) metres, got \(accuracy)")
        }
        if let speed = location.speed, !(speed.isFinite && speed >= 0 && speed <= maximumSpeed) {
            return ("speed", "must be from 0 to \(Int(maximumSpeed)) m/s, got \(speed)")
        }
        if let bearing = location.bearing, !(bearing.isFinite && bearing >= 0 && bearing < 360) {
            return ("bearing", "must be from 0 to less than 360 degrees, got \(bearing)")
        }
        if let altitude = location.altitude, !altitude.isFinite {
            return ("altitude", "must be a finite number")
        }
        return nil
    }

    /// Splits a batch into what may be stored and what is refused, oldest location first.
    public func check(_ batch: IngestBatch, now: Date) -> CheckedBatch {
        var locations: [DeviceLocation] = []
        var geotags: [GeotagRecord] = []
        var rejected: [RejectedItem] = []
        for (index, location) in batch.locations.enumerated() {
            if let (field, reason) = problem(with: location, now: now) {
                rejected.append(RejectedItem(kind: "location", index: index, field: "locations[\(index)].\(field)", reason: reason))
            } else {
                locations.append(location)
            }
        }
        for (index, geotag) in (batch.geotags ?? []).enumerated() {
            if let (field, reason) = problem(with: geotag.location, now: now) {
                rejected.append(RejectedItem(kind: "geotag", index: index, field: "geotags[\(index)].location.\(field)", reason: reason))
            } else {
                geotags.append(geotag)
            }
        }
        locations.sort { $0.recordedAt < $1.recordedAt }
        return CheckedBatch(locations: locations, geotags: geotags, rejected: rejected)
    }

    /// Bytes of a batch's JSON at most, checked before anything is decoded: `maximumBatchSize`
    /// items of up to 512 bytes each (a location with every field in full precision is about 250;
    /// a geotag adds its metadata), and 64 KiB for the intents and the rest.
    public var maximumBatchBytes: Int { maximumBatchSize * 512 + 64 * 1024 }

    /// The ingest socket's `ZMQ_MAXMSGSIZE`: twice a batch's limit, so a batch a little too big is
    /// answered `batch_too_large`, and only a far bigger frame makes libzmq drop the connection
    /// before it is read into memory.
    public var maximumMessageBytes: Int { 2 * maximumBatchBytes }

    /// A problem with a batch's JSON of `count` bytes (too big to be decoded), or nil.
    public func problem(withBytes count: Int) -> String? {
        count > maximumBatchBytes
            ? "a batch's JSON is at most \(maximumBatchBytes) bytes (\(maximumBatchSize) locations and geotags), got \(count)" : nil
    }

    /// A problem with the batch as a whole (too big), or nil.
    public func problem(withSize batch: IngestBatch) -> String? {
        let size = batch.locations.count + (batch.geotags?.count ?? 0)
        return size > maximumBatchSize ? "a batch holds at most \(maximumBatchSize) locations and geotags, got \(size)" : nil
    }
}

/// A batch after the rules: what is kept, sorted by time, and what is refused.
public struct CheckedBatch: Sendable, Equatable {
    public var locations: [DeviceLocation]
    public var geotags: [GeotagRecord]
    public var rejected: [RejectedItem]
}
