import Foundation
import Wire

/// Parameters of a service's `events` op: the events after a sequence, for a consumer that saw a
/// gap or restarted (the zguide's Clone pattern).
public struct EventsQuery: Codable, Sendable, Equatable {
    public var after: UInt64
    public var limit: Int?

    public init(after: UInt64, limit: Int? = nil) {
        self.after = after
        self.limit = limit
    }
}

/// The reply of `events`: events in sequence order, and the source's last sequence (a consumer
/// that has it is up to date).
@WireKeys
public struct EventsPage: Codable, Sendable, Equatable {
    public var events: [CloudEvent<JSONValue>]
    public var lastSequence: UInt64

    public init(events: [CloudEvent<JSONValue>], lastSequence: UInt64) {
        self.events = events
        self.lastSequence = lastSequence
    }
}
