import RideModels

/// Nearby across shards: every shard answers from its own devices, nearest first; the caller wants
/// one answer, nearest first, at most `limit` long.
public enum NearbyMerge {
    /// Merges the shards' answers: nearest first (equal distances by device id, so the answer does
    /// not depend on which shard replied first), each device once, cut to `limit`.
    public static func merge(_ answers: [[NearbyDevice]], limit: Int) -> [NearbyDevice] {
        let sorted = answers.joined().sorted { ($0.distance, $0.deviceID) < ($1.distance, $1.deviceID) }
        // A device is kept by one shard; should two ever answer for it, the nearer one counts.
        var seen = Set<String>()
        var merged: [NearbyDevice] = []
        for device in sorted where merged.count < limit && seen.insert(device.deviceID).inserted {
            merged.append(device)
        }
        return merged
    }
}
