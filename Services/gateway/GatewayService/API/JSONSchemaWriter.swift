import Wire

/// Wire schemas as the JSON Schema of an OpenAPI 3.1 document: every model and enumeration once,
/// under `components/schemas`, and `$ref`s to it wherever it is used.
struct JSONSchemaWriter {
    private(set) var components: [String: JSONValue] = [:]

    /// The schema of a value (a `$ref` for a named model or enumeration).
    mutating func schema(_ schema: WireSchema) -> JSONValue {
        switch schema {
        case .string(let format?): return ["type": "string", "format": .string(format)]
        case .string: return ["type": "string"]
        // Unless a rule says otherwise, what a JSON number holds exactly (and a Swift Int takes).
        case .integer: return ["type": "integer", "minimum": .number(-WireRules.safeInteger), "maximum": .number(WireRules.safeInteger)]
        case .number: return ["type": "number"]
        case .boolean: return ["type": "boolean"]
        case .any: return [:]
        case .array(let items): return ["type": "array", "items": self.schema(items)]
        case .map(let values): return ["type": "object", "additionalProperties": self.schema(values)]
        case .enumeration(let enumeration):
            if components[enumeration.name] == nil {
                var component: [String: JSONValue] = ["type": "string", "enum": .array(enumeration.values.map(JSONValue.string))]
                component["description"] = enumeration.description.map(JSONValue.string)
                components[enumeration.name] = .object(component)
            }
            return Self.reference(enumeration.name)
        case .model(let model):
            if components[model.name] == nil {
                components[model.name] = [:]  // models refer to one another: mark it before its members
                var component = object(model.properties)
                component["description"] = model.description.map(JSONValue.string)
                components[model.name] = .object(component)
            }
            return Self.reference(model.name)
        }
    }

    /// A live message's schema (a `$ref`): `type`, always the kind's, and its body's members.
    mutating func liveMessage(_ kind: LiveKindDescriptor) -> JSONValue {
        if components[kind.schemaName] == nil {
            components[kind.schemaName] = [:]
            var component = object([WireProperty("type", .string(), required: true)] + kind.members())
            var properties = component["properties"]?.objectValue ?? [:]
            properties["type"] = ["const": .string(kind.type)]
            component["properties"] = .object(properties)
            component["description"] = .string(kind.summary)
            components[kind.schemaName] = .object(component)
        }
        return Self.reference(kind.schemaName)
    }

    /// An object with these members; an optional member may also be `null` (read as absent).
    mutating func object(_ members: [WireProperty]) -> [String: JSONValue] {
        var properties: [String: JSONValue] = [:]
        for member in members {
            properties[member.key] = property(
                member.schema, rules: member.rules, description: member.description, nullable: !member.required)
        }
        var object: [String: JSONValue] = ["type": "object", "properties": .object(properties)]
        let required = members.filter(\.required).map(\.key)
        if !required.isEmpty { object["required"] = .array(required.map(JSONValue.string)) }
        return object
    }

    /// A member's or parameter's schema: its type's, with its rules and description.
    mutating func property(_ schema: WireSchema, rules: WireRules, description: String?, nullable: Bool = false) -> JSONValue {
        var result = self.schema(schema).objectValue ?? [:]
        if let minimum = rules.minimum { result["minimum"] = .number(minimum) }
        if let maximum = rules.maximum { result["maximum"] = .number(maximum) }
        if let exclusiveMinimum = rules.exclusiveMinimum {
            result["exclusiveMinimum"] = .number(exclusiveMinimum)
            result["minimum"] = nil
        }
        if let minLength = rules.minLength { result["minLength"] = .number(Double(minLength)) }
        if let maxLength = rules.maxLength { result["maxLength"] = .number(Double(maxLength)) }
        if let pattern = rules.pattern { result["pattern"] = .string(pattern) }
        if let minItems = rules.minItems { result["minItems"] = .number(Double(minItems)) }
        if let maxItems = rules.maxItems { result["maxItems"] = .number(Double(maxItems)) }
        if nullable {
            if case .string(let type)? = result["type"] {
                result["type"] = [.string(type), "null"]
            } else if let reference = result.removeValue(forKey: "$ref") {
                result["anyOf"] = [["$ref": reference], ["type": "null"]]
            }
        }
        if let description { result["description"] = .string(description) }
        return .object(result)
    }

    static func reference(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
}
