import ZeroMQ

/// Which connection of the ingest socket speaks for each device: the one that last sent the
/// device a batch whose credential checked (with credentials off: a batch that was accepted).
/// `device.command` pushes go there and nowhere else. A routing id is whatever the peer chose, so
/// it is never trusted by itself: a connection gets a device's slot only by proving the device's
/// credential, and presenting a device's id as routing id earns nothing.
struct IngestSlots {
    private struct Slot {
        var connection: Frame
        var provenAt: ContinuousClock.Instant
    }

    /// Devices at most; past it, the longest-unproven tenth is forgotten (their commands wait for
    /// the device's next batch, a second away while it streams, or for its next sync).
    let capacity: Int
    private var slots: [String: Slot] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { slots.count }

    /// `connection` has just proven `deviceID`'s credential.
    mutating func proven(_ deviceID: String, by connection: Frame, at now: ContinuousClock.Instant) {
        if slots[deviceID] == nil, slots.count >= capacity {
            let oldest = slots.sorted { $0.value.provenAt < $1.value.provenAt }.prefix(max(1, capacity / 10))
            for (device, _) in oldest { slots[device] = nil }
        }
        slots[deviceID] = Slot(connection: connection, provenAt: now)
    }

    /// The connection that speaks for `deviceID`, nil when none has proven it.
    func connection(of deviceID: String) -> Frame? { slots[deviceID]?.connection }
}
