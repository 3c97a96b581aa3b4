import Foundation

/// A group commit's devices as columns, for one `UPDATE … FROM UNNEST`: each device once, from its
/// last write. A device any of whose writes changed its name, metadata or intents is in `changed`
/// instead, to be written whole. An absent reading is NaN, an absent time `absent`, turned back
/// into NULL by the statement.
struct DeviceColumns {
    static let absent = Int64.min
    var changed: [DeviceRecord] = []
    var ids: [String] = [], activities: [String] = [], lastSeen: [Int64] = [], sequences: [Int64] = []
    var latitudes: [Double] = [], longitudes: [Double] = [], recordedAt: [Int64] = []
    var accuracies: [Double] = [], speeds: [Double] = [], bearings: [Double] = []

    init(_ writes: [TrackingWrite]) {
        var last: [String: Int] = [:]
        var intentsChanged: Set<String> = []
        for (index, write) in writes.enumerated() {
            last[write.record.id] = index
            if write.intentsChanged { intentsChanged.insert(write.record.id) }
        }
        for (index, write) in writes.enumerated() where last[write.record.id] == index {
            let record = write.record
            if intentsChanged.contains(record.id) {
                changed.append(record)
                continue
            }
            ids.append(record.id)
            activities.append(record.activity.rawValue)
            lastSeen.append(record.lastSeen.map(SQLiteTrackingStore.milliseconds) ?? Self.absent)
            sequences.append(Int64(record.sequence))
            latitudes.append(record.latest?.latitude ?? .nan)
            longitudes.append(record.latest?.longitude ?? .nan)
            recordedAt.append(record.latest.map { SQLiteTrackingStore.milliseconds($0.recordedAt) } ?? Self.absent)
            accuracies.append(record.latest?.accuracy ?? .nan)
            speeds.append(record.latest?.speed ?? .nan)
            bearings.append(record.latest?.bearing ?? .nan)
        }
    }
}

/// A group commit's locations as columns, for one `UNNEST` insert; an absent reading is NaN
/// (`mocked`: −1), turned back into NULL by the statement.
struct LocationColumns {
    var devices: [String] = [], times: [Int64] = [], latitudes: [Double] = [], longitudes: [Double] = []
    var accuracies: [Double] = [], speeds: [Double] = [], bearings: [Double] = [], altitudes: [Double] = [], mocked: [Int64] = []

    init(_ writes: [TrackingWrite]) {
        for write in writes {
            for location in write.locations {
                devices.append(write.record.id)
                times.append(SQLiteTrackingStore.milliseconds(location.recordedAt))
                latitudes.append(location.latitude)
                longitudes.append(location.longitude)
                accuracies.append(location.accuracy ?? .nan)
                speeds.append(location.speed ?? .nan)
                bearings.append(location.bearing ?? .nan)
                altitudes.append(location.altitude ?? .nan)
                mocked.append(location.mocked.map { $0 ? 1 : 0 } ?? -1)
            }
        }
    }
}
