/// A type on the wire: its JSON is written and read in one pass, and described by a JSON Schema —
/// all three derived from its declaration by `@WireModel` (for a struct: its stored properties,
/// with the keys of its `CodingKeys`; for a `String` enum: its raw values), so a key is spelled
/// once. Foundation's `Codable`, synthesized from the same declaration, stays the reference: the
/// fast reader gives up (nil) on anything unusual and `JSONDecoder` decodes instead, naming any error.
public protocol WireValue: JSONWritable, JSONReadable, Sendable {
    static var wireSchema: WireSchema { get }
    /// Checks the `@WireField` rules of this value's members, and of theirs (`path`: where this
    /// value is, for the message). A model's is derived; other values have none.
    func validate(at path: String) throws(WireViolation)
    /// Checks `rules` against this value itself: numbers their bounds, strings their length and pattern.
    func check(_ rules: WireRules, at path: String) throws(WireViolation)
}

extension WireValue {
    @inlinable public func validate(at path: String) throws(WireViolation) {}
    @inlinable public func check(_ rules: WireRules, at path: String) throws(WireViolation) {}
}

/// Derives `WireValue` for a struct (from its stored properties and `CodingKeys`) or for an enum
/// with `String` raw values. Doc comments become the schema's descriptions. A struct without
/// `CodingKeys` gets them derived: each stored property's name in snake_case (`userID`: user_id),
/// or its `@WireKey`; one that declares keys it would derive is refused (one spelling of each key).
@attached(member, names: named(CodingKeys))
@attached(extension, conformances: WireValue, names: named(writeJSON), named(read), named(wireSchema), named(init), named(validate))
public macro WireModel() = #externalMacro(module: "WireMacros", type: "WireModelMacro")

/// Rules of one stored property of a `@WireModel` type, stated in its schema (and so in the API
/// document) and checked after decoding by `WireValidating.validate()` (a 422 naming the field).
/// It generates nothing itself: `@WireModel` reads it.
@attached(peer)
public macro WireField(
    minimum: Double? = nil, maximum: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil,
    meaning: String? = nil,
    minItems: Int? = nil, maxItems: Int? = nil, exclusiveMinimum: Double? = nil
) = #externalMacro(module: "WireMacros", type: "WireFieldMacro")

/// The key of one stored property of a `@WireModel` (or `@WireKeys`) type where it is not the
/// property's name in snake_case — a unit, as in `@WireKey("distance_m") var distanceMetres`.
/// It generates nothing itself: `@WireModel` reads it.
@attached(peer)
public macro WireKey(_ key: String) = #externalMacro(module: "WireMacros", type: "WireFieldMacro")

/// A `Codable` struct's `CodingKeys` as `@WireModel` derives them (each stored property's name in
/// snake_case, or its `@WireKey`), for a type that cannot be a wire model because a member is not
/// one (a `CloudEvent`, a date the tool formats itself).
@attached(member, names: named(CodingKeys))
public macro WireKeys() = #externalMacro(module: "WireMacros", type: "WireKeysMacro")

/// A value whose JSON is that of another wire type, its `WireForm` (a GeoJSON point is
/// `{"type":"Point","coordinates":[lon, lat]}` around a `GeoPoint`): written and read through it,
/// described by its schema. `init(wireForm:)` gives nil for a form it refuses, so the fast reader
/// gives up and the type's `Decodable` says what is wrong.
public protocol WireRepresented: WireValue {
    associatedtype WireForm: WireValue
    var wireForm: WireForm { get }
    init?(wireForm: WireForm)
}

extension WireRepresented {
    @inlinable public func writeJSON(to out: inout [UInt8]) { wireForm.writeJSON(to: &out) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Self? {
        WireForm.read(from: &reader).flatMap(Self.init(wireForm:))
    }
    public static var wireSchema: WireSchema { WireForm.wireSchema }
}

extension WireValue {
    /// The first `@WireField` rule this value breaks, as "field: problem"; nil when it keeps them all.
    public var ruleViolation: String? {
        do throws(WireViolation) {
            try validate(at: "")
            return nil
        } catch {
            return error.description
        }
    }
}

/// Adds `public static let catalog` to an enum: the `descriptor` of each of its static constants
/// made by a call of one of `callees` (a type such as `Op`, or a function such as `Ops.events`),
/// in declaration order. The contract's lists of ops and events are these, never written by hand.
@attached(member, names: named(catalog))
public macro Catalog(_ callees: String...) = #externalMacro(module: "WireMacros", type: "CatalogMacro")
