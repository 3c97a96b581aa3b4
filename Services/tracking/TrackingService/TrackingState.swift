import Bus
import Foundation
import RideContract
import RideModels
import Synchronization
import Wire

/// The in-memory core behind a lock, shared by the ingest thread (which applies batches) and the
/// worker's thread (which answers Nearby). Both hold it for microseconds.
public final class TrackingState: Sendable {
    private let core: Mutex<TrackingCore>

    public init(devices: [DeviceRecord], stale: Bool = false) { core = Mutex(TrackingCore(devices: devices, stale: stale)) }

    public func needsRefresh(_ id: String, sharded: Bool) -> Bool { core.withLock { $0.needsRefresh(id, sharded: sharded) } }

    /// `owns`: asked under the lock, so a device released meanwhile (a handover) is not taken back.
    public func refresh(_ id: String, stored: DeviceRecord?, owns: (String) -> Bool = { _ in true }) {
        core.withLock { core in
            guard owns(id) else { return }
            core.refresh(id, stored: stored)
        }
    }

    /// Adopts the devices of `stored` that `owns` says this process now serves and does not hold;
    /// how many.
    public func adopt(stored: [DeviceRecord], owns: (String) -> Bool) -> Int {
        core.withLock { core in
            let arriving = stored.filter { owns($0.id) && core.record($0.id) == nil }
            core.adopt(arriving, stale: true)
            return arriving.count
        }
    }

    /// Releases the devices held that this process no longer serves (before the store is read).
    public func release(unless owns: (String) -> Bool) -> Int {
        core.withLock { core in
            let leaving = core.heldIDs.filter { !owns($0) }
            core.release(leaving)
            return leaving.count
        }
    }

    public func apply(deviceID: String, intents: DeviceIntents?, locations: [DeviceLocation], now: Date) -> DeviceChange {
        core.withLock { $0.apply(deviceID: deviceID, intents: intents, locations: locations, now: now) }
    }

    /// As `apply`, for a device this process serves when the lock is taken; nil when it does not
    /// (released by a handover while its batch was checked).
    public func apply(deviceID: String, intents: DeviceIntents?, locations: [DeviceLocation], now: Date, owns: (String) -> Bool)
        -> DeviceChange?
    {
        core.withLock { core in
            guard owns(deviceID) else { return nil }
            return core.apply(deviceID: deviceID, intents: intents, locations: locations, now: now)
        }
    }

    public func setAvailability(deviceID: String, available: Bool, now: Date) -> DeviceChange? {
        core.withLock { $0.setAvailability(deviceID: deviceID, available: available, now: now) }
    }

    public func command(deviceID: String, tracking: Bool, issuedAt: Date) -> DeviceChange? {
        core.withLock { $0.command(deviceID: deviceID, tracking: tracking, issuedAt: issuedAt) }
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
            Counts(devices: core.deviceCount, active: core.activeCount, indexed: core.indexedCount, cells: core.occupiedCellCount)
        }
    }
}

/// Turns a device event into its CloudEvent bytes (source `tracking/devices/<id>`, its own sequence).
enum DeviceEventEncoding {
    static func encode(_ event: DeviceEvent) throws -> [UInt8] {
        let data: [UInt8]
        switch event.payload {
        case .location(let location): data = location.jsonBytes
        case .status(let status): data = try JSONCoding.encode(status)
        }
        return EnvelopeWriter.write(
            id: EventID.next(), source: Events.deviceSource(event.deviceID),
            type: event.type, time: event.time, sequence: event.sequence, data: data)
    }
}
