import Foundation

/// When the watcher last heard from each device it watches, so that a device gone quiet is looked
/// up in tracking's history. The bus is the fast path but not a promise: an event is lost when
/// the bus restarts, when a subscription is re-sent after a reconnect, or when a subscriber falls
/// behind its high-water mark — and a parked car whose arrival fix was lost would keep its ride
/// waiting for an arrival that tracking has stored. A device counts as quiet after `silence`
/// seconds without a location (or without a look at its history), and is looked at again at most
/// once per `silence`.
public struct DeviceSilence: Sendable, Equatable {
    struct Heard: Sendable, Equatable {
        /// When a location last arrived, or the history was last asked for (this process's clock).
        var checkedAt: Date
        /// The newest location's time (the device's clock), or the trip's start: where a look
        /// at the history begins.
        var newest: Date
    }

    public var silence: TimeInterval
    private var devices: [String: Heard] = [:]

    public init(silence: TimeInterval = 10) { self.silence = silence }

    /// A device starts being watched, for a trip started at `since`.
    public mutating func watch(_ deviceID: String, since: Date, now: Date) {
        guard devices[deviceID] == nil else { return }
        devices[deviceID] = Heard(checkedAt: now, newest: since)
    }

    /// A location of the device arrived.
    public mutating func heard(_ deviceID: String, recordedAt: Date, now: Date) {
        guard var heard = devices[deviceID] else { return }
        heard.checkedAt = now
        heard.newest = max(heard.newest, recordedAt)
        devices[deviceID] = heard
    }

    /// The device is no longer watched.
    public mutating func forget(_ deviceID: String) { devices[deviceID] = nil }

    /// The devices quiet for `silence` and where their history should be read from; each counts
    /// as looked at now, so it is not due again before another `silence`.
    public mutating func due(now: Date) -> [(deviceID: String, from: Date)] {
        var quiet: [(deviceID: String, from: Date)] = []
        for (deviceID, heard) in devices where now.timeIntervalSince(heard.checkedAt) >= silence {
            quiet.append((deviceID, heard.newest))
            devices[deviceID]?.checkedAt = now
        }
        return quiet.sorted { $0.deviceID < $1.deviceID }
    }
}
