/// Which source publishes which topics, as a subscriber checks it: an event on a topic with a
/// declared publisher must come from that publisher, or from one of its parts (`publisher/…`:
/// tracking's `tracking/devices/<id>`). Topics with none declared are anyone's. The platform's
/// rule is its contract's (`Events.sourceRule`); the bus layer only applies it.
public struct EventSourceRule: Sendable {
    /// Topic prefixes and their publisher, longest prefix first.
    private let publishers: [(topicPrefix: String, source: String)]

    public init(publishers: [(topicPrefix: String, source: String)]) {
        self.publishers = publishers.sorted { $0.topicPrefix.utf8.count > $1.topicPrefix.utf8.count }
    }

    /// The publisher `topic` is declared to come from, if any.
    public func publisher(ofTopic topic: String) -> String? {
        publishers.first { topic.hasPrefix($0.topicPrefix) }?.source
    }

    /// Why an event from `source` on `topic` is refused; nil when it may be.
    public func problem(topic: String, source: String) -> String? {
        guard let publisher = publisher(ofTopic: topic) else { return nil }
        if source == publisher || (source.hasPrefix(publisher) && source.utf8.dropFirst(publisher.utf8.count).first == UInt8(ascii: "/")) {
            return nil
        }
        return "source \"\(source.prefix(100))\" is not the publisher of this topic (\(publisher))"
    }
}
