/// What the event forwarder has passed upstream of the subscriptions it received, so that a
/// subscription it refused never takes away one it allowed.
///
/// With manual subscriptions (`ZMQ_XPUB_MANUAL`) the bus's egress hands every subscription and
/// unsubscription to the forwarder, which applies the allowed ones to their subscriber and passes
/// them upstream to the publishers. When a subscriber disconnects, libzmq sends an unsubscription
/// for every prefix it had asked for — refused ones too — with no sender to tell them apart. Such an
/// unsubscription is taken from the refused count first: so the count passed upstream for a prefix
/// is never below the number of allowed subscribers that hold it (at worst a prefix stays
/// subscribed upstream a little longer, which costs publishers a few sends, never a subscriber its events).
struct SubscriptionLedger {
    private var allowed: [[UInt8]: Int] = [:]
    private var refused: [[UInt8]: Int] = [:]
    /// Distinct refused prefixes kept at most (a flood of refused prefixes cannot grow it without
    /// bound; past it, refusals are no longer counted, which can only keep prefixes upstream longer).
    static let refusedCapacity = 100_000

    /// Records a subscription to `prefix`; whether to pass it upstream (it was allowed).
    mutating func subscribed(_ prefix: [UInt8], allowed isAllowed: Bool) -> Bool {
        if isAllowed {
            allowed[prefix, default: 0] += 1
        } else if refused[prefix] != nil || refused.count < Self.refusedCapacity {
            refused[prefix, default: 0] += 1
        }
        return isAllowed
    }

    /// Records the end of a subscription to `prefix`; whether to pass it upstream. `wasAllowed`: what
    /// the policy says of its sender (nil when the sender is unknown: a subscriber that disconnected).
    mutating func unsubscribed(_ prefix: [UInt8], wasAllowed: Bool?) -> Bool {
        switch wasAllowed {
        case false?:
            Self.decrement(&refused, prefix)
            return false
        case true?:
            return Self.decrement(&allowed, prefix)
        case nil:
            if Self.decrement(&refused, prefix) { return false }
            return Self.decrement(&allowed, prefix)
        }
    }

    /// How many allowed subscriptions to `prefix` are passed upstream (tests).
    func upstream(_ prefix: [UInt8]) -> Int { allowed[prefix] ?? 0 }

    @discardableResult
    private static func decrement(_ counts: inout [[UInt8]: Int], _ prefix: [UInt8]) -> Bool {
        guard let count = counts[prefix] else { return false }
        counts[prefix] = count > 1 ? count - 1 : nil
        return true
    }
}
