import Bus

extension Events {
    /// Who publishes each topic — the source of its event kind — as the platform's subscribers
    /// check it (`EventSubscriber.Options.platform`): an `order.status.*` event whose source is not
    /// `orders` is refused as malformed, whoever managed to put it on the bus.
    public static let sourceRule = EventSourceRule(publishers: RideContract.events.map { (topicPrefix: $0.topic, source: $0.source) })
}

extension EventSubscriber.Options {
    /// How the platform's processes subscribe: an event whose source is not its topic's publisher
    /// (`Events.sourceRule`) is refused as malformed — reported, counted, skipped.
    public static var platform: Self {
        var options = Self()
        options.sourceRule = Events.sourceRule
        return options
    }
}
