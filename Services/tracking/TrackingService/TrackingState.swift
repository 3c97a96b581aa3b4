import Bus
import Foundation
import RideModels
import Synchronization

/// The in-memory core behind a lock, shared by the ingest thread (which applies batches) and the
/// worker's thread (which answers Nearby). Both hold it for microseconds.
public final class TrackingState: Sendable {
    private let core: Mutex<TrackingCore>

    public init(devices: [DeviceRecord]) { core = Mutex(TrackingCore(devices: devices)) }

    public func apply(deviceID: String, intents: DeviceIntents?, locations: [DeviceLocation], now: Date) -> DeviceChange {
        core.withLock { $0.apply(deviceID: deviceID, intents: intents, locations: locations, now: now) }
    }

    public func setAvailability(deviceID: String, available: Bool, now: Date) -> DeviceChange? {
        core.withLock { $0.setAvailability(deviceID: deviceID, available: available, now: now) }
    }

    public func sweep(now: Date, inactiveAfter: TimeInterval) -> [DeviceChange] {
        core.withLock { $0.sweep(now: now, inactiveAfter: inactiveAfter) }
    }

    public func nearby(_ query: NearbyQuery, now: Date) -> [NearbyDevice] {
        core.withLock { $0.nearby(query, now: now) }
    }

    public func record(_ id: String) -> DeviceRecord? { core.withLock { $0.record(id) } }

    public struct Counts: Sendable {
        public var devices: Int
        public var active: Int
        public var indexed: Int
        public var cells: Int
    }

    public var counts: Counts {
        core.withLock { core in
            Counts(devices: core.devices.count, active: core.devices.values.lazy.filter { $0.activity == .active }.count,
                   indexed: core.grid.count, cells: core.grid.occupiedCellCount)
        }
    }
}

/// Turns a device event into its CloudEvent bytes (source `tracking/devices/<id>`, its own sequence).
enum DeviceEventEncoding {
    static func encode(_ event: DeviceEvent) throws -> [UInt8] {
        let data: [UInt8]
        switch event.payload {
        case .location(let location): data = locationData(location)
        case .status(let status): data = try JSONCoding.encode(status)
        }
        return EnvelopeWriter.write(id: EventID.next(), source: BusContract.deviceSource(event.deviceID),
                                    type: event.type, time: event.time, sequence: event.sequence, data: data)
    }

    /// `device.location` data written by hand — one per location, the hot path (a JSONEncoder pass
    /// costs several times more). Same keys, order and number format as `JSONCoding.encode` (tested).
    static func locationData(_ event: DeviceLocationEvent) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(200)
        func number(_ key: String, _ value: Double?) {
            guard let value else { return }
            out.append(contentsOf: "\"\(key)\":".utf8)
            EnvelopeWriter.appendNumber(value, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(UInt8(ascii: "{"))
        number("accuracy", event.accuracy)
        number("bearing", event.bearing)
        out.append(contentsOf: #""device_id":"#.utf8)
        EnvelopeWriter.appendQuoted(event.deviceID, to: &out)
        out.append(contentsOf: #","location":{"coordinates":["#.utf8)
        EnvelopeWriter.appendNumber(event.location.point.longitude, to: &out)
        out.append(UInt8(ascii: ","))
        EnvelopeWriter.appendNumber(event.location.point.latitude, to: &out)
        out.append(contentsOf: #"],"type":"Point"},"recorded_at":""#.utf8)
        RFC3339.append(event.recordedAt, to: &out)
        out.append(UInt8(ascii: "\""))
        if let speed = event.speed {
            out.append(contentsOf: #","speed":"#.utf8)
            EnvelopeWriter.appendNumber(speed, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
