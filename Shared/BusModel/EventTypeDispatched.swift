import Wire

/// A payload that stands for several event types of a source, decoded by the CloudEvents `type`
/// it travels with, never by guessing from its keys: `CloudEvent` hands the type to these
/// initialisers instead of calling `init(from:)`.
public protocol EventTypeDispatched: JSONReadable, Sendable {
    /// The payload of an event of `type`, from its `data`.
    init(type: String, from decoder: any Decoder) throws
    /// The same, by the one-pass reader; nil when JSONDecoder should decide (it says what is wrong).
    static func read(type: String, from reader: inout JSONFastReader) -> Self?
}

extension EventTypeDispatched {
    /// Outside an envelope there is no type to go by.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "\(Self.self) is decoded by its event's type, inside a CloudEvent"))
    }

    /// Outside an envelope there is no type to go by: JSONDecoder decides (and refuses).
    public static func read(from reader: inout JSONFastReader) -> Self? { nil }
}
