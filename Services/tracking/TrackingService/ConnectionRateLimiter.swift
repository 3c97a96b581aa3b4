import ZeroMQ

/// A token bucket per ingest connection (keyed by its routing id): `rate` messages a second, up
/// to `burst` at once. A device sends about one batch a second; a connection sending far more is
/// refused (`rate_limited`) before anything of its message is read.
///
/// Bounded: at `capacity` connections, buckets that have refilled (idle ones, the same as new) are
/// forgotten, at most once a second; while every bucket is busy, a new connection is refused.
struct ConnectionRateLimiter {
    private struct Bucket {
        var tokens: Double
        var updatedAt: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    let capacity: Int
    private var buckets: [Frame: Bucket] = [:]
    private var sweptAt: ContinuousClock.Instant?

    init(rate: Double, burst: Double, capacity: Int) {
        self.rate = rate
        self.burst = max(1, burst)
        self.capacity = max(1, capacity)
    }

    var count: Int { buckets.count }

    /// Whether `connection` may send a message now (it spends a token).
    mutating func admit(_ connection: Frame, now: ContinuousClock.Instant) -> Bool {
        var bucket: Bucket
        if let known = buckets[connection] {
            bucket = known
            bucket.tokens = refilled(known, now: now)
            bucket.updatedAt = now
        } else {
            guard buckets.count < capacity || sweep(now: now) else { return false }
            bucket = Bucket(tokens: burst, updatedAt: now)
        }
        let admitted = bucket.tokens >= 1
        if admitted { bucket.tokens -= 1 }
        buckets[connection] = bucket
        return admitted
    }

    private func refilled(_ bucket: Bucket, now: ContinuousClock.Instant) -> Double {
        let elapsed = now - bucket.updatedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(burst, bucket.tokens + max(0, seconds) * rate)
    }

    /// Forgets the buckets that are full again; whether there is room now.
    private mutating func sweep(now: ContinuousClock.Instant) -> Bool {
        if let sweptAt, now - sweptAt < .seconds(1) { return false }
        sweptAt = now
        buckets = buckets.filter { refilled($0.value, now: now) < burst }
        return buckets.count < capacity
    }
}
