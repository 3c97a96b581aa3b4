/// A value already written as JSON (an order as it was stored), spliced into a larger message
/// as is instead of being written again. Foundation's coding goes through `Value`, so both paths
/// give the same bytes for the same value.
public struct PreEncoded<Value: WireValue & Codable>: WireValue, Codable, Sendable {
    public let json: [UInt8]

    public init(json: [UInt8]) { self.json = json }

    @inlinable public func writeJSON(to out: inout [UInt8]) { out.append(contentsOf: json) }

    public static func read(from reader: inout JSONFastReader) -> PreEncoded? {
        Value.read(from: &reader).map { PreEncoded(json: $0.jsonBytes) }
    }

    public static var wireSchema: WireSchema { Value.wireSchema }

    public init(from decoder: any Decoder) throws {
        json = try JSONCoding.encode(Value(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONCoding.decode(Value.self, from: json).encode(to: encoder)
    }
}
