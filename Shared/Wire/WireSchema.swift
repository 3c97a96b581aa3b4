/// The JSON Schema of a wire type, as `@WireModel` derives it: what the API document states and
/// what the property tests generate values from.
public indirect enum WireSchema: Sendable {
    case string(format: String? = nil)
    case integer
    case number
    case boolean
    /// Any JSON value (`JSONValue`).
    case any
    case array(WireSchema)
    /// An object whose members all have the schema (`[String: V]`).
    case map(WireSchema)
    /// A string from a fixed list (an enum's raw values).
    case enumeration(WireEnumSchema)
    case model(WireModelSchema)
}

/// A named enumeration: `name` is its Swift type's name without the module (`Trip.Status` is
/// `TripStatus`), the component name in the API document.
public struct WireEnumSchema: Sendable {
    public let name: String
    public let values: [String]
    public let description: String?

    public init(_ type: Any.Type, values: [String], description: String? = nil) {
        name = WireModelSchema.componentName(of: type)
        self.values = values
        self.description = description
    }
}

/// A named object type, its members in key order.
public struct WireModelSchema: Sendable {
    public let name: String
    public let description: String?
    // Read lazily: models refer to one another, and a schema is only walked when a document or a
    // test needs it.
    private let makeProperties: @Sendable () -> [WireProperty]
    /// The Swift type, for tests that generate values of every model the contract names.
    public let type: any WireValue.Type

    public init(_ type: any WireValue.Type, description: String? = nil, properties: @escaping @Sendable () -> [WireProperty]) {
        self.type = type
        name = Self.componentName(of: type)
        self.description = description
        makeProperties = properties
    }

    public var properties: [WireProperty] { makeProperties() }

    /// `RideModels.Trip.Destination` → `TripDestination`.
    static func componentName(of type: Any.Type) -> String {
        let path = String(reflecting: type).split(separator: ".").dropFirst()
        return path.joined()
    }
}

/// One member of a model: its key, schema, whether it must be present, and its rules.
public struct WireProperty: Sendable {
    public let key: String
    public let schema: WireSchema
    public let required: Bool
    public let description: String?
    public let rules: WireRules

    public init(_ key: String, _ schema: WireSchema, required: Bool, description: String? = nil, rules: WireRules = WireRules()) {
        self.key = key
        self.schema = schema
        self.required = required
        self.description = description
        self.rules = rules
    }
}

/// What `@WireField` states of a property beyond its type.
public struct WireRules: Sendable, Equatable {
    public var minimum: Double?
    /// A number must be more than this.
    public var exclusiveMinimum: Double?
    public var maximum: Double?
    public var minLength: Int?
    public var maxLength: Int?
    public var pattern: String?
    /// What `pattern` asks for, in words: the error says "must be <meaning>".
    public var meaning: String?
    /// An array's bounds.
    public var minItems: Int?
    public var maxItems: Int?

    public init(
        minimum: Double? = nil, maximum: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil,
        meaning: String? = nil,
        minItems: Int? = nil, maxItems: Int? = nil, exclusiveMinimum: Double? = nil
    ) {
        self.minimum = minimum
        self.exclusiveMinimum = exclusiveMinimum
        self.maximum = maximum
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.meaning = meaning
        self.minItems = minItems
        self.maxItems = maxItems
    }

    public var isEmpty: Bool { self == WireRules() }
}
