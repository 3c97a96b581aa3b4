import Foundation

/// When the watcher last heard from each device it watches (and the newest location it heard, so
/// a new trip for a watched device starts from it), so that a device gone quiet is looked up in
/// tracking's history. The bus is the fast path but not a promise: an event is lost when
/// the bus restarts, when a subscription is re-sent after a reconnect, or when a subscriber falls
/// behind its high-water mark — and a parked car whose arrival fix was lost would keep its ride
/// waiting for an arrival that tracking has stored. A device counts as quiet after `silence`
/// seconds without a location (or without a look at its history), and is looked at again at most
/// once per `silence`.
public struct DeviceSilence: Sendable, Equatable {
    struct Heard: Sendable, Equatable {
        /// When a location last arrived, or the history was last asked for (this process's clock).
        var checkedAt: Date
        /// The start of the device's first watched trip: where a look at the history begins
        /// before any location arrived.
        var since: Date
        /// The newest location (by the device's clock).
        var latest: TrackPoint?

        /// Where a look at the history begins.
        var from: Date { max(since, latest?.recordedAt ?? since) }
    }

    public var silence: TimeInterval
    /// How long a device whose last trip ended is still heard (the watcher stays subscribed), so
    /// that its next trip — the dropoff after a pickup trip that ended at the pickup — starts from
    /// a current location without a call to tracking.
    public var remembered: TimeInterval
    private var devices: [String: Heard] = [:]
    /// A device let go, still heard: its newest location, and when it was let go.
    struct Kept: Sendable, Equatable {
        var fix: TrackPoint?
        var at: Date
    }
    private var lingering: [String: Kept] = [:]

    public init(silence: TimeInterval = 10, remembered: TimeInterval = 120) {
        self.silence = silence
        self.remembered = remembered
    }

    /// A device starts being watched, for a trip started at `since`.
    public mutating func watch(_ deviceID: String, since: Date, now: Date) {
        guard devices[deviceID] == nil else { return }
        devices[deviceID] = Heard(checkedAt: now, since: since, latest: lingering.removeValue(forKey: deviceID)?.fix)
    }

    /// Whether the device is heard: watched, or let go less than `remembered` ago.
    public func isHeard(_ deviceID: String) -> Bool { devices[deviceID] != nil || lingering[deviceID] != nil }

    /// A location of the device arrived (a late one does not replace a newer `latest`).
    public mutating func heard(_ deviceID: String, fix: TrackPoint, now: Date) {
        if var kept = lingering[deviceID] {
            if fix.recordedAt >= kept.fix?.recordedAt ?? .distantPast { kept.fix = fix }
            lingering[deviceID] = kept
        }
        guard var heard = devices[deviceID] else { return }
        heard.checkedAt = now
        if fix.recordedAt >= heard.latest?.recordedAt ?? .distantPast { heard.latest = fix }
        devices[deviceID] = heard
    }

    /// The newest location heard from a device watched or still heard (nil: none).
    public func latest(of deviceID: String) -> TrackPoint? { devices[deviceID]?.latest ?? lingering[deviceID]?.fix }

    /// The device's last trip ended: it is heard for `remembered` more seconds, then `expired`.
    public mutating func forget(_ deviceID: String, now: Date) {
        guard let heard = devices.removeValue(forKey: deviceID) else { return }
        lingering[deviceID] = Kept(fix: heard.latest, at: now)
    }

    /// The devices let go `remembered` seconds ago or more, no longer heard from now on.
    public mutating func expired(now: Date) -> [String] {
        let expired = lingering.filter { now.timeIntervalSince($0.value.at) >= remembered }.keys.sorted()
        for deviceID in expired { lingering[deviceID] = nil }
        return expired
    }

    /// The devices quiet for `silence` and where their history should be read from; each counts
    /// as looked at now, so it is not due again before another `silence`.
    public mutating func due(now: Date) -> [(deviceID: String, from: Date)] {
        var quiet: [(deviceID: String, from: Date)] = []
        for (deviceID, heard) in devices where now.timeIntervalSince(heard.checkedAt) >= silence {
            quiet.append((deviceID, heard.from))
            devices[deviceID]?.checkedAt = now
        }
        return quiet.sorted { $0.deviceID < $1.deviceID }
    }
}
