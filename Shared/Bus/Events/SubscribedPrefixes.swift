/// The prefixes a publisher has heard subscribed, and whether one of them covers a topic.
///
/// A publisher batching its events (`EventBatch`) leaves out what nobody hears, as libzmq's XPUB
/// does for two-frame events. Tracking's publisher hears one `device.location.<id>` per watched
/// device, thousands in a city: `covers` looks each topic up once per distinct prefix length (a
/// handful), not once per prefix, and a prefix is kept as bytes from when it is heard.
public struct SubscribedPrefixes: Sendable {
    private var prefixes: Set<ArraySlice<UInt8>> = []
    /// Prefix lengths in use, ascending, with how many prefixes have each.
    private var lengths: [(length: Int, count: Int)] = []

    public init() {}

    public init(_ prefixes: some Sequence<[UInt8]>) {
        for prefix in prefixes { insert(prefix) }
    }

    /// How many distinct prefixes are subscribed.
    public var count: Int { prefixes.count }

    /// Records a subscription to `prefix` (again: no change).
    public mutating func insert(_ prefix: some Collection<UInt8>) {
        guard prefixes.insert(ArraySlice(prefix)).inserted else { return }
        let length = prefix.count
        if let at = lengths.firstIndex(where: { $0.length >= length }), lengths[at].length == length {
            lengths[at].count += 1
        } else {
            lengths.insert((length, 1), at: lengths.firstIndex { $0.length > length } ?? lengths.endIndex)
        }
    }

    /// Records the end of the subscription to `prefix` (none: no change).
    public mutating func remove(_ prefix: some Collection<UInt8>) {
        guard prefixes.remove(ArraySlice(prefix)) != nil,
            let at = lengths.firstIndex(where: { $0.length == prefix.count })
        else { return }
        lengths[at].count -= 1
        if lengths[at].count == 0 { lengths.remove(at: at) }
    }

    /// Whether some subscribed prefix starts `topic`.
    public func covers(_ topic: [UInt8]) -> Bool {
        for (length, _) in lengths {
            guard length <= topic.count else { return false }
            if prefixes.contains(topic[..<length]) { return true }
        }
        return false
    }
}
