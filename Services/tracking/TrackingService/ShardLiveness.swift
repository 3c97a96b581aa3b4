import Foundation
import Logging
import ServiceLifecycle

/// Watches the other shards and hands devices over when one goes down or comes back: every
/// `interval` it pings each other shard's peer service; a shard that has not answered for
/// `downAfter` is down (its devices go to the next live shard of their ranking), and one that
/// answers again is up (its devices go back to it). Each change: this shard first releases what it
/// no longer serves, then reads the store and adopts what it now serves, at their stored
/// positions — Nearby shows them before their phones find this shard.
struct ShardLiveness: Service {
    static let interval: Duration = .seconds(1)
    static let downAfter: Duration = .seconds(3)

    let peers: ShardPeers
    let state: TrackingState
    let store: any TrackingStore
    let logger: Logger

    func run() async throws {
        let ownership = peers.ownership
        let others = (0..<ownership.shard.shards.count).filter { $0 != ownership.shard.index }
        // Every shard is believed up at start: one that never answers is down after `downAfter`.
        var lastAnswered = Dictionary(uniqueKeysWithValues: others.map { ($0, ContinuousClock.now) })
        var adoptionOwed = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let started = ContinuousClock.now
            let answered = await withTaskGroup(of: Int?.self) { group in
                for shard in others {
                    group.addTask { await peers.answers(shard, timeout: Self.interval) ? shard : nil }
                }
                var answered: [Int] = []
                for await shard in group { if let shard { answered.append(shard) } }
                return answered
            }
            let now = ContinuousClock.now
            for shard in answered { lastAnswered[shard] = now }
            let live = Set(others.filter { now - lastAnswered[$0, default: now] < Self.downAfter })
            let before = ownership.liveShards
            if ownership.setLive(live) {
                let released = state.release(unless: ownership.owns)
                logger.warning(
                    "tracking shards up: \(ownership.liveShards.sorted().map(String.init).joined(separator: ","))",
                    metadata: [
                        "down": "\(Set(0..<ownership.shard.shards.count).subtracting(ownership.liveShards).sorted())",
                        "was_up": "\(before.sorted())", "released_devices": "\(released)",
                    ])
                adoptionOwed = true
            }
            if adoptionOwed { adoptionOwed = await adopt() == false }
            try? await Task.sleep(until: started + Self.interval)
        }
    }

    /// Reads every stored device and adopts those this shard now serves; false when the store did
    /// not answer (tried again on the next round).
    private func adopt() async -> Bool {
        do {
            let stored = try await store.loadDevices()
            let adopted = state.adopt(stored: stored, owns: peers.ownership.owns)
            logger.info("devices taken over from the store", metadata: ["adopted": "\(adopted)", "stored": "\(stored.count)"])
            return true
        } catch {
            logger.warning("devices to take over could not be read; trying again", metadata: ["error": "\(error)"])
            return false
        }
    }
}
