/// A rate: `count` requests at once, then `count` more each minute as the bucket refills (one
/// every `60 / count` seconds).
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var perMinute: Int

    public init(perMinute: Int) { self.perMinute = max(1, perMinute) }

    /// How long one request's worth takes to come back.
    var refillTime: Duration { .seconds(60) / perMinute }

    public var description: String { "\(perMinute)/min" }
}

/// Token buckets by key (an address, an account, a bearer token): pure logic on the instants it is
/// given, so tests step its clock. A request passes only when every key it names has a token left,
/// and then takes one from each; a refused request takes none, so a refused flood does not
/// postpone its own end. Memory is bounded: at `capacity` keys the refilled buckets (equal to
/// absent ones) are dropped, and if that frees too little, the fullest half: a flood of distinct
/// keys (each of which has spent one token) evicts its own, and a key that is being held back,
/// near empty, keeps its count — the limits cannot be flushed by filling the table.
struct RateLimiter<Key: Hashable & Sendable>: Sendable {
    /// Why a request was refused: the seconds until every key it named has a token again.
    struct Refusal: Equatable {
        let retryAfterSeconds: Int
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        let limit: RateLimit

        func refilled(at now: ContinuousClock.Instant) -> Double {
            guard now > updated else { return tokens }
            return min(Double(limit.perMinute), tokens + (now - updated) / limit.refillTime)
        }
    }

    let capacity: Int
    private var buckets: [Key: Bucket] = [:]

    init(capacity: Int = 100_000) { self.capacity = max(1, capacity) }

    var count: Int { buckets.count }

    /// Takes a token from each key's bucket (nil), or refuses without taking any.
    mutating func take(_ keys: [(key: Key, limit: RateLimit)], at now: ContinuousClock.Instant) -> Refusal? {
        if let refusal = refusal(keys, at: now) { return refusal }
        for (key, limit) in keys {
            let tokens = buckets[key]?.refilled(at: now) ?? Double(limit.perMinute)
            if buckets[key] == nil { makeRoom(at: now) }
            buckets[key] = Bucket(tokens: tokens - 1, updated: now, limit: limit)
        }
        return nil
    }

    /// Why a request naming `keys` would be refused now; nil when it would pass. Takes nothing.
    func refusal(_ keys: [(key: Key, limit: RateLimit)], at now: ContinuousClock.Instant) -> Refusal? {
        var wait = Duration.zero
        for (key, limit) in keys {
            let tokens = buckets[key]?.refilled(at: now) ?? Double(limit.perMinute)
            if tokens < 1 { wait = max(wait, limit.refillTime * (1 - tokens)) }
        }
        if wait > .zero {
            // Whole seconds, rounded up: a client waiting that long is let through.
            let seconds = Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up))
            return Refusal(retryAfterSeconds: max(1, seconds))
        }
        return nil
    }

    private mutating func makeRoom(at now: ContinuousClock.Instant) {
        guard buckets.count >= capacity else { return }
        buckets = buckets.filter { $0.value.refilled(at: now) < Double($0.value.limit.perMinute) }
        guard buckets.count >= capacity else { return }
        // The fullest half goes (by the share of its burst left): once per capacity / 2 new keys.
        let byFullness = buckets.map { (key: $0.key, share: $0.value.refilled(at: now) / Double($0.value.limit.perMinute)) }.sorted {
            $0.share > $1.share
        }
        for entry in byFullness.prefix(max(1, buckets.count / 2)) { buckets[entry.key] = nil }
    }
}
