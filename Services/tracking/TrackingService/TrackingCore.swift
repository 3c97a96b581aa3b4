import Bus
import Foundation
import Geo
import RideModels

/// One device as tracking knows it.
public struct DeviceRecord: Sendable, Equatable {
    public var id: String
    public var name: String?
    public var metadata: [String: JSONValue] = [:]
    public var available = false
    public var tracking = false
    /// When the intents (name, metadata, tracking, availability) last changed; the newer side wins.
    public var intentsChangedAt = Date(timeIntervalSince1970: 0)
    public var latest: DeviceLocation?
    /// Server time of the last location received.
    public var lastSeen: Date?
    public var activity: DeviceActivity = .inactive
    /// The last sequence of this device's event stream (source `tracking/devices/<id>`).
    public var sequence: UInt64 = 0

    public init(id: String) { self.id = id }

    public var info: DeviceInfo {
        DeviceInfo(deviceID: id, name: name, metadata: metadata, available: available, tracking: tracking,
                   status: activity, lastSeen: lastSeen, location: latest.map(LatestLocation.init))
    }

    public var intents: DeviceIntents {
        DeviceIntents(name: name, metadata: metadata, tracking: tracking, available: available, changedAt: intentsChangedAt)
    }
}

/// An event tracking publishes once the change behind it is stored.
public struct DeviceEvent: Sendable, Equatable {
    public enum Payload: Sendable, Equatable {
        case location(DeviceLocationEvent)
        case status(DeviceStatusEvent)
    }

    public var deviceID: String
    public var sequence: UInt64
    public var time: Date
    public var payload: Payload

    public var topic: String {
        switch payload {
        case .location: BusContract.Topics.deviceLocation + deviceID
        case .status: BusContract.Topics.deviceStatus + deviceID
        }
    }

    public var type: String {
        switch payload {
        case .location: "device.location"
        case .status: "device.status"
        }
    }
}

/// A change to one device: the record to store and the events to publish after it is stored.
public struct DeviceChange: Sendable, Equatable {
    public var record: DeviceRecord
    public var events: [DeviceEvent]
    /// Whether the name, metadata or intents changed (or the device is new): the store then writes
    /// them; otherwise only the moving parts (position, activity, sequence).
    public var intentsChanged: Bool = true
}

/// Everything tracking keeps in memory — each device's latest state and the spatial index of
/// their positions — as a value with no I/O: the service wraps it in a lock; tests drive it directly.
public struct TrackingCore: Sendable {
    public private(set) var devices: [String: DeviceRecord] = [:]
    public private(set) var grid = SpatialGrid<String>()

    public init(devices: [DeviceRecord] = []) {
        for record in devices {
            self.devices[record.id] = record
            if let latest = record.latest { grid.update(record.id, to: latest.point) }
        }
    }

    public func record(_ id: String) -> DeviceRecord? { devices[id] }

    /// Applies a device's checked batch: intents (when newer than the server's), then locations.
    /// Every accepted location is history; only those newer than the device's latest are published
    /// (a resent or late fix does not move the device back).
    public mutating func apply(deviceID: String, intents: DeviceIntents?, locations: [DeviceLocation], now: Date) -> DeviceChange {
        let isNew = devices[deviceID] == nil
        var record = devices[deviceID] ?? DeviceRecord(id: deviceID)
        var events: [DeviceEvent] = []
        let wasAvailable = record.available
        var intentsChanged = isNew
        if let intents, (intents.changedAt ?? now) >= record.intentsChangedAt {
            intentsChanged = true
            if let name = intents.name { record.name = name }
            if let metadata = intents.metadata { record.metadata = metadata }
            if let tracking = intents.tracking { record.tracking = tracking }
            if let available = intents.available { record.available = available }
            record.intentsChangedAt = intents.changedAt ?? now
        }
        var moved = false
        for location in locations where record.latest.map({ location.recordedAt > $0.recordedAt }) ?? true {
            record.latest = location
            moved = true
            record.sequence += 1
            events.append(DeviceEvent(deviceID: deviceID, sequence: record.sequence, time: now,
                                      payload: .location(DeviceLocationEvent(deviceID: deviceID, location: location))))
        }
        if !locations.isEmpty { record.lastSeen = now }
        if moved, let latest = record.latest { grid.update(deviceID, to: latest.point) }

        let shouldBeActive = !locations.isEmpty && (record.tracking || record.available)
        let stopped = !record.tracking && !record.available
        if shouldBeActive && record.activity == .inactive {
            record.activity = .active
            events.append(statusEvent(&record, now: now, reason: nil))
        } else if stopped && record.activity == .active {
            record.activity = .inactive
            events.append(statusEvent(&record, now: now, reason: "tracking_stopped"))
        } else if record.available != wasAvailable {
            events.append(statusEvent(&record, now: now, reason: record.available ? "available" : "unavailable"))
        }
        devices[deviceID] = record
        return DeviceChange(record: record, events: events, intentsChanged: intentsChanged)
    }

    /// A server-side availability change (`tracking.set_availability`); nil for an unknown device.
    public mutating func setAvailability(deviceID: String, available: Bool, now: Date) -> DeviceChange? {
        guard var record = devices[deviceID] else { return nil }
        guard record.available != available else { return DeviceChange(record: record, events: []) }
        record.available = available
        record.intentsChangedAt = now
        let event = statusEvent(&record, now: now, reason: available ? "available" : "unavailable")
        devices[deviceID] = record
        return DeviceChange(record: record, events: [event])
    }

    /// Devices silent for longer than `inactiveAfter` become inactive (and say so).
    public mutating func sweep(now: Date, inactiveAfter: TimeInterval) -> [DeviceChange] {
        var changes: [DeviceChange] = []
        for (id, record) in devices where record.activity == .active {
            guard let lastSeen = record.lastSeen, now.timeIntervalSince(lastSeen) > inactiveAfter else { continue }
            var updated = record
            updated.activity = .inactive
            let event = statusEvent(&updated, now: now, reason: "silence")
            devices[id] = updated
            changes.append(DeviceChange(record: updated, events: [event], intentsChanged: false))
        }
        return changes
    }

    /// Devices near a point, nearest first, with HyperTrack's Nearby filters.
    public func nearby(_ query: NearbyQuery, now: Date) -> [NearbyDevice] {
        let onlyAvailable = query.availableOnly ?? false
        let within = query.lastUpdatedWithin.map { $0 * 3600 }
        let allowed = query.devices.map(Set.init)
        let metadata = query.metadata ?? [:]
        let found = grid.nearest(to: query.location.point, within: query.radius, limit: query.limit ?? 10) { id in
            guard let record = devices[id] else { return false }
            if onlyAvailable && !record.available { return false }
            if let allowed, !allowed.contains(id) { return false }
            if let within, let latest = record.latest, now.timeIntervalSince(latest.recordedAt) > within { return false }
            return metadata.allSatisfy { key, value in record.metadata[key].map { Self.contains($0, value) } ?? false }
        }
        return found.compactMap { hit in
            guard let record = devices[hit.id] else { return nil }
            return NearbyDevice(deviceID: hit.id, name: record.name, distance: (hit.distance * 10).rounded() / 10,
                                location: GeoJSONPoint(hit.point), available: record.available, tracking: record.tracking,
                                lastSeen: record.lastSeen, metadata: record.metadata)
        }
    }

    /// Whether `value` contains `pattern`: equal scalars and arrays, objects matched key by key (so
    /// `{"car":{"model":"Prius"}}` matches a car with more fields).
    static func contains(_ value: JSONValue, _ pattern: JSONValue) -> Bool {
        if case .object(let patternMembers) = pattern, case .object(let members) = value {
            return patternMembers.allSatisfy { key, sub in members[key].map { contains($0, sub) } ?? false }
        }
        return value == pattern
    }

    private func statusEvent(_ record: inout DeviceRecord, now: Date, reason: String?) -> DeviceEvent {
        record.sequence += 1
        return DeviceEvent(deviceID: record.id, sequence: record.sequence, time: now,
                           payload: .status(DeviceStatusEvent(deviceID: record.id, value: record.activity, available: record.available, reason: reason)))
    }
}
