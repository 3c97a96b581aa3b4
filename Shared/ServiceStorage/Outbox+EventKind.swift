import Bus
import Foundation
import GRDB
import Logging
import PostgresNIO
import Storage

extension Outbox {
    /// Appends an event of `kind` inside the caller's write transaction; returns its sequence.
    /// The kind names the topic and type, and its payload type is the only one `data` may be.
    @discardableResult
    public static func append<Payload: Encodable>(
        _ db: Database, _ kind: EventKind<Payload>, key: String? = nil, data: Payload, time: Date = Date(),
        trace: TraceHeaders? = Trace.currentHeaders
    ) throws -> UInt64 {
        try append(db, topic: kind.topic(key: key), type: kind.type, data: data, time: time, trace: trace)
    }

    /// Appends an event of `kind` whose data is encoded the faster way `EncodedPayload` vouches for.
    @discardableResult
    public static func append<Payload>(
        _ db: Database, _ kind: EventKind<Payload>, key: String? = nil, encoded data: some EncodedPayload<Payload>, time: Date = Date(),
        trace: TraceHeaders? = Trace.currentHeaders
    ) throws -> UInt64 {
        try append(db, topic: kind.topic(key: key), type: kind.type, data: data, time: time, trace: trace)
    }
}

extension PostgresOutbox {
    /// Appends an event of `kind` inside the caller's transaction; returns its sequence.
    @discardableResult
    public static func append<Payload: Encodable>(
        _ connection: PostgresConnection, _ kind: EventKind<Payload>, key: String? = nil, data: Payload, time: Date = Date(),
        trace: TraceHeaders? = Trace.currentHeaders, logger: Logger
    ) async throws -> UInt64 {
        try await append(connection, topic: kind.topic(key: key), type: kind.type, data: data, time: time, trace: trace, logger: logger)
    }

    /// Appends an event of `kind` whose data is encoded the faster way `EncodedPayload` vouches for.
    @discardableResult
    public static func append<Payload>(
        _ connection: PostgresConnection, _ kind: EventKind<Payload>, key: String? = nil, encoded data: some EncodedPayload<Payload>,
        time: Date = Date(), trace: TraceHeaders? = Trace.currentHeaders, logger: Logger
    ) async throws -> UInt64 {
        try await append(connection, topic: kind.topic(key: key), type: kind.type, data: data, time: time, trace: trace, logger: logger)
    }
}
