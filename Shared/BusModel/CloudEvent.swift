import Foundation
import Wire

/// A CloudEvents 1.0 event in structured JSON mode: the second frame of every message on the bus.
///
/// `{"specversion":"1.0","id":"…","source":"orders","type":"order.status","time":"<RFC 3339>",
///   "sequence":"42","datacontenttype":"application/json","data":{…}}`
///
/// `sequence` is a decimal string (the CloudEvents sequence extension), gap-free per `source`:
/// a subscriber that sees 41 then 43 knows it missed one and asks the source for it.
///
/// `traceparent` and `tracestate` (the CloudEvents distributed-tracing extension, optional) carry
/// the W3C trace context of the span that published the event; a malformed one is ignored on
/// decoding (the event is kept, its trace is not), never an error.
public struct CloudEvent<Payload: Sendable>: Sendable {
    public static var specVersion: String { "1.0" }
    public static var contentType: String { "application/json" }

    public var id: String
    public var source: String
    public var type: String
    public var time: Date
    public var sequence: UInt64
    public var data: Payload
    /// The trace the event belongs to (docs/tracing.md); nil when none.
    public var trace: TraceHeaders?

    public init(
        id: String = EventID.next(), source: String, type: String, time: Date = Date(), sequence: UInt64, data: Payload,
        trace: TraceHeaders? = nil
    ) {
        self.id = id
        self.source = source
        self.type = type
        self.time = time
        self.sequence = sequence
        self.data = data
        self.trace = trace
    }
}

extension CloudEvent: Equatable where Payload: Equatable {}

extension CloudEvent {
    /// The same event (id, source, type, time, sequence, trace) carrying `data` — its data decoded anew.
    public func withData<Other: Sendable>(_ data: Other) -> CloudEvent<Other> {
        CloudEvent<Other>(id: id, source: source, type: type, time: time, sequence: sequence, data: data, trace: trace)
    }
}

/// Why an event was rejected: the field and what is wrong with it.
public struct EnvelopeError: Error, Equatable, CustomStringConvertible, Sendable {
    public let field: String
    public let reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field): \(reason)" }
}

enum CloudEventKeys: String, CodingKey {
    case specversion, id, source, type, time, sequence, datacontenttype, data, traceparent, tracestate
}

extension CloudEvent: Encodable where Payload: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CloudEventKeys.self)
        try container.encode(Self.specVersion, forKey: .specversion)
        try container.encode(id, forKey: .id)
        try container.encode(source, forKey: .source)
        try container.encode(type, forKey: .type)
        try container.encode(RFC3339.format(time), forKey: .time)
        try container.encode(String(sequence), forKey: .sequence)
        try container.encodeIfPresent(trace?.traceparent, forKey: .traceparent)
        try container.encodeIfPresent(trace?.tracestate, forKey: .tracestate)
        try container.encode(Self.contentType, forKey: .datacontenttype)
        try container.encode(data, forKey: .data)
    }
}

extension CloudEvent: Decodable where Payload: Decodable {
    /// Strict: every required attribute present, of the right type and form. Extension attributes
    /// that CloudEvents allows (other keys) are ignored.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CloudEventKeys.self)
        func requiredString(_ key: CloudEventKeys) throws -> String {
            guard container.contains(key) else { throw EnvelopeError(field: key.stringValue, reason: "required attribute is missing") }
            guard let value = try? container.decode(String.self, forKey: key) else {
                throw EnvelopeError(field: key.stringValue, reason: "must be a string")
            }
            guard !value.isEmpty else { throw EnvelopeError(field: key.stringValue, reason: "must not be empty") }
            return value
        }
        let version = try requiredString(.specversion)
        guard version == Self.specVersion else {
            throw EnvelopeError(field: "specversion", reason: "must be \"1.0\", got \"\(version)\"")
        }
        id = try requiredString(.id)
        source = try requiredString(.source)
        type = try requiredString(.type)
        let timeText = try requiredString(.time)
        guard let time = RFC3339.parse(timeText) else {
            throw EnvelopeError(field: "time", reason: "must be an RFC 3339 time, got \"\(timeText)\"")
        }
        self.time = time
        let sequenceText = try requiredString(.sequence)
        guard sequenceText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let sequence = UInt64(sequenceText) else {
            throw EnvelopeError(field: "sequence", reason: "must be a decimal string of digits, got \"\(sequenceText)\"")
        }
        self.sequence = sequence
        // Optional and never a reason to refuse the event: a malformed trace context is dropped.
        trace = TraceHeaders(
            traceparent: try? container.decodeIfPresent(String.self, forKey: .traceparent),
            tracestate: try? container.decodeIfPresent(String.self, forKey: .tracestate))
        if container.contains(.datacontenttype) {
            let contentType = try? container.decode(String.self, forKey: .datacontenttype)
            guard contentType == Self.contentType else {
                throw EnvelopeError(field: "datacontenttype", reason: "must be \"application/json\"")
            }
        }
        guard container.contains(.data) else { throw EnvelopeError(field: "data", reason: "required attribute is missing") }
        do {
            if let dispatched = Payload.self as? any EventTypeDispatched.Type {
                data = try Self.payload(dispatched.init(type: type, from: container.superDecoder(forKey: .data)))
            } else {
                data = try container.decode(Payload.self, forKey: .data)
            }
        } catch let error as DecodingError {
            let detail = JSONCoding.describe(error)
            throw EnvelopeError(field: "data", reason: detail.hasPrefix("data") ? detail : "does not fit the event type: \(detail)")
        }
    }
}

extension CloudEvent: JSONReadable where Payload: JSONReadable {
    /// The envelope as `init(from:)` checks it, read in one pass; anything it would reject (or
    /// that the payload's reader does not handle) goes to JSONDecoder, which says what is wrong.
    public static func read(from reader: inout JSONFastReader) -> CloudEvent? {
        var (id, source, type, time, sequence, data): (String?, String?, String?, Date?, UInt64?, Payload?) = (nil, nil, nil, nil, nil, nil)
        var (traceparent, tracestate): (String?, String?) = (nil, nil)
        var seen: UInt16 = 0  // the envelope's members read, one bit each (`memberBit`): a repeat gives up
        var pendingData: JSONFastReader?
        func nonEmpty(_ reader: inout JSONFastReader) -> String? { reader.string().flatMap { $0.isEmpty ? nil : $0 } }
        let read = reader.object { reader, key in
            if let bit = Self.memberBit(key) {
                guard seen & bit == 0 else { return false }
                seen |= bit
            }
            switch key {
            case "specversion": return reader.string() == specVersion
            case "id":
                id = nonEmpty(&reader)
                return id != nil
            case "source":
                source = nonEmpty(&reader)
                return source != nil
            case "type":
                type = nonEmpty(&reader)
                return type != nil
            case "time":
                time = reader.time()
                return time != nil
            case "sequence":
                guard let text = reader.string(), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return false }
                sequence = UInt64(text)
                return sequence != nil
            case "datacontenttype": return reader.string() == contentType
            // Not strings: left to JSONDecoder, which ignores them as `init(from:)` does.
            case "traceparent":
                traceparent = reader.string()
                return traceparent != nil
            case "tracestate":
                tracestate = reader.string()
                return tracestate != nil
            case "data":
                guard let dispatched = Payload.self as? any EventTypeDispatched.Type else {
                    data = Payload.read(from: &reader)
                    return data != nil
                }
                // The type decides how data is read: data before type (sorted keys) is read once the type is known.
                guard let type else {
                    pendingData = reader
                    return reader.skipValue()
                }
                data = dispatched.read(type: type, from: &reader) as? Payload
                return data != nil
            default: return reader.skipValue()
            }
        }
        if read, data == nil, var pending = pendingData, let type, let dispatched = Payload.self as? any EventTypeDispatched.Type {
            data = dispatched.read(type: type, from: &pending) as? Payload
        }
        guard read, seen & Self.memberBit("specversion")! != 0, let id, let source, let type, let time, let sequence, let data else {
            return nil
        }
        return CloudEvent(
            id: id, source: source, type: type, time: time, sequence: sequence, data: data,
            trace: TraceHeaders(traceparent: traceparent, tracestate: tracestate))
    }

    /// The envelope's members, each a bit of `read`'s record of what it saw; nil for any other key,
    /// which is skipped (a repeat of it changes nothing, as in `init(from:)`).
    static func memberBit(_ key: String) -> UInt16? {
        switch key {
        case "specversion": 1
        case "id": 2
        case "source": 4
        case "type": 8
        case "time": 16
        case "sequence": 32
        case "datacontenttype": 64
        case "traceparent": 128
        case "tracestate": 256
        case "data": 512
        default: nil
        }
    }
}

extension CloudEvent {
    /// `value` as the payload type it was made as (an `EventTypeDispatched` payload is `Payload` itself).
    static func payload(_ value: Any) throws -> Payload {
        guard let payload = value as? Payload else {
            throw DecodingError.typeMismatch(
                Payload.self, .init(codingPath: [CloudEventKeys.data], debugDescription: "not a \(Payload.self)"))
        }
        return payload
    }
}

extension CloudEvent where Payload: Encodable {
    /// The same event with its data decoded anew as `Other` (by the event's type when `Other` is
    /// `EventTypeDispatched`): the whole event written and read back.
    public func retyped<Other: Decodable>(as: Other.Type) throws -> CloudEvent<Other> {
        try JSONCoding.decode(CloudEvent<Other>.self, from: JSONCoding.encode(self))
    }
}

extension CloudEvent where Payload: Decodable {
    /// The one-pass reader of events of this payload (`read(from:)`), found once, for a subscriber
    /// that reads many: `decode` finds it per event through a cast to `any JSONReadable.Type`,
    /// which costs a metadata lookup and a boxed value each time. Nil when the payload has no
    /// reader of its own; an event the reader leaves (nil) is for `decode`, which says what is wrong.
    public static var oneParseReader: (([UInt8]) -> CloudEvent<Payload>?)? {
        guard let readable = Payload.self as? any (JSONReadable & Sendable).Type else { return nil }
        return reader(of: readable)
    }

    private static func reader<Readable: JSONReadable & Sendable>(of _: Readable.Type) -> (([UInt8]) -> CloudEvent<Payload>?)? {
        let read: ([UInt8]) -> CloudEvent<Readable>? = { CloudEvent<Readable>.readWhole($0) }
        // `Readable` is `Payload`, so the two function types are one.
        return read as? ([UInt8]) -> CloudEvent<Payload>?
    }

    /// Decodes and checks one event. Every failure is an `EnvelopeError` naming the field.
    public static func decode(_ bytes: [UInt8]) throws(EnvelopeError) -> CloudEvent<Payload> {
        do {
            return try JSONCoding.decode(CloudEvent<Payload>.self, from: bytes)
        } catch let error as EnvelopeError {
            throw error
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw EnvelopeError(field: "(event)", reason: "not valid JSON")
            }
            if case .typeMismatch(_, let context) = error, context.codingPath.isEmpty {
                throw EnvelopeError(field: "(event)", reason: "must be a JSON object")
            }
            throw EnvelopeError(field: JSONCoding.path(error.context.codingPath), reason: JSONCoding.describe(error))
        } catch {
            throw EnvelopeError(field: "(event)", reason: "\(error)")
        }
    }
}

extension CloudEvent where Payload: Encodable {
    public func encoded() throws -> [UInt8] { try JSONCoding.encode(self) }
}

extension DecodingError {
    var context: Context {
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): c
        @unknown default: Context(codingPath: [], debugDescription: "\(self)")
        }
    }
}
