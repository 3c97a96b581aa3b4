import SwiftSyntax

/// A struct as its synthesized `Codable` sees it: the stored properties that are coded, each with
/// its key (from `CodingKeys` when the struct declares one), its type, and whether it is optional.
struct WireStructDescription {
    struct Property {
        /// The Swift name (backticks removed).
        var name: String
        /// The type as written, without the optional around it.
        var type: String
        var optional: Bool
        var key: String
        var documentation: String?
        /// The arguments of its `@WireField(...)`, as written.
        var rules: String?
    }

    let properties: [Property]
    let documentation: String?
    /// The struct's own `enum CodingKeys` (name → key), nil when it declares none and `@WireModel`
    /// derives it: each stored property's name in snake_case.
    let declaredKeys: [String: String]?
    /// Every stored property synthesized `Codable` could code, whether `CodingKeys` names it or not.
    let storedNames: [String]

    init(_ decl: StructDeclSyntax) throws {
        guard decl.genericParameterClause == nil else {
            throw WireMacroError("@WireModel does not derive generic types (\(decl.name.text))")
        }
        documentation = WireMacros.documentation(in: decl.leadingTrivia)
        let keys = Self.codingKeys(of: decl)
        declaredKeys = keys
        var stored: [String] = []
        var properties: [Property] = []
        for member in decl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) }) { continue }
            let isLet = variable.bindingSpecifier.text == "let"
            let rules = Self.rules(of: variable)
            for binding in variable.bindings {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                if let accessors = binding.accessorBlock, Self.isComputed(accessors) { continue }
                let name = pattern.identifier.text.replacingBackticks()
                // Synthesized decoding skips a `let` with a value (and says so in a warning).
                if isLet, binding.initializer != nil { continue }
                stored.append(name)
                let key: String
                if let keys {
                    guard let coded = keys[name] else { continue }
                    key = coded
                } else {
                    key = try Self.key(of: variable) ?? Self.snakeCase(name)
                }
                guard let written = binding.typeAnnotation?.type else {
                    throw WireMacroError("@WireModel needs the type of '\(name)' written out")
                }
                let (type, optional) = Self.unwrapped(written)
                properties.append(
                    Property(
                        name: name, type: type, optional: optional, key: key,
                        documentation: WireMacros.documentation(in: variable.leadingTrivia), rules: rules))
            }
        }
        storedNames = stored
        guard properties.count <= 64 else {
            throw WireMacroError("@WireModel reads at most 64 members; \(decl.name.text) has \(properties.count)")
        }
        // JSONEncoder's sortedKeys order: by UTF-8 bytes.
        self.properties = properties.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// `CodingKeys` as `@WireModel` derives them: nil when the struct declares its own.
    var derivedCodingKeys: String? {
        guard declaredKeys == nil else { return nil }
        let cases = properties.map { $0.key == $0.name ? "    case \($0.name)" : "    case \($0.name) = \(literal($0.key))" }
        return "enum CodingKeys: String, CodingKey {\n\(cases.joined(separator: "\n"))\n}"
    }

    /// The struct declares `CodingKeys` that say no more than `@WireModel` would derive.
    var declaresDerivableKeys: Bool {
        guard let declaredKeys else { return false }
        return declaredKeys.count == storedNames.count && storedNames.allSatisfy { declaredKeys[$0] == Self.snakeCase($0) }
    }

    /// A Swift name as a wire key: words split where a lowercase letter or digit meets an
    /// uppercase one, or where an acronym ends (`URLString`: url_string; `deviceIDs`: device_ids).
    static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let pluralAcronym = next == "s" && index + 2 == characters.count
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true && !pluralAcronym) {
                    out += "_"
                }
            }
            out += character.lowercased()
        }
        return out
    }

    /// Property name → key, from a nested `enum CodingKeys`; nil when there is none.
    static func codingKeys(of decl: StructDeclSyntax) -> [String: String]? {
        for member in decl.memberBlock.members {
            guard let keysEnum = member.decl.as(EnumDeclSyntax.self), keysEnum.name.text == "CodingKeys" else { continue }
            var keys: [String: String] = [:]
            for caseMember in keysEnum.memberBlock.members {
                guard let cases = caseMember.decl.as(EnumCaseDeclSyntax.self) else { continue }
                for element in cases.elements {
                    let name = element.name.text.replacingBackticks()
                    if let raw = element.rawValue?.value.as(StringLiteralExprSyntax.self) {
                        keys[name] = raw.segments.compactMap { $0.as(StringSegmentSyntax.self)?.content.text }.joined()
                    } else {
                        keys[name] = name
                    }
                }
            }
            return keys
        }
        return nil
    }

    /// Computed (a getter), rather than stored with observers.
    static func isComputed(_ block: AccessorBlockSyntax) -> Bool {
        // Not a switch: the toolchain's own swift-syntax (which `make` builds the plugin against) is
        // built for library evolution, where the enum may grow cases.
        guard case .accessors(let list) = block.accessors else { return true }
        return list.contains { !["willSet", "didSet"].contains($0.accessorSpecifier.text) }
    }

    static func unwrapped(_ type: TypeSyntax) -> (String, Bool) {
        if let optional = type.as(OptionalTypeSyntax.self) { return (optional.wrappedType.trimmedDescription, true) }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first
        {
            return (argument.argument.trimmedDescription, true)
        }
        return (type.trimmedDescription, false)
    }

    /// The key its `@WireKey("…")` gives a property, where the wire's name is not its Swift name in
    /// snake_case (a unit: `distance_m` for `distanceMetres`); nil without one.
    static func key(of variable: VariableDeclSyntax) throws -> String? {
        for element in variable.attributes {
            guard let attribute = element.as(AttributeSyntax.self), attribute.attributeName.trimmedDescription == "WireKey" else {
                continue
            }
            guard case .argumentList(let arguments) = attribute.arguments, arguments.count == 1,
                let literal = arguments.first?.expression.as(StringLiteralExprSyntax.self), literal.segments.count == 1,
                let text = literal.segments.first?.as(StringSegmentSyntax.self)?.content.text, !text.isEmpty
            else {
                throw WireMacroError("@WireKey takes the key as one plain string literal, as in @WireKey(\"distance_m\")")
            }
            return text
        }
        return nil
    }

    static func rules(of variable: VariableDeclSyntax) -> String? {
        for element in variable.attributes {
            guard let attribute = element.as(AttributeSyntax.self), attribute.attributeName.trimmedDescription == "WireField" else {
                continue
            }
            if case .argumentList(let arguments) = attribute.arguments { return arguments.trimmedDescription }
            return ""
        }
        return nil
    }

    // MARK: Generated code

    func extensionSource(type: String, access: String) -> String {
        """
        extension \(type): WireValue {
        \(writer(access: access))
        \(reader(access: access))
        \(initializer())
        \(schema(access: access))
        \(validation(access: access))
        }
        """
    }

    private func writer(access: String) -> String {
        let members = properties.map { "        object.member(\(literal($0.key)), self.\($0.name), &out)" }
        return """
                \(access)func writeJSON(to out: inout [UInt8]) {
                    var object = JSONObjectWriter(&out)
            \(members.joined(separator: "\n"))
                    object.end(&out)
                }
            """
    }

    private func reader(access: String) -> String {
        let locals = properties.map { "        var _\($0.name): \($0.type)? = nil" }
        let cases = properties.enumerated().map { index, property in
            let read = property.optional ? "optionalMember" : "member"
            return
                "            case \(literal(property.key)): return reader.\(read)(&_\(property.name), \(UInt64(1) << UInt64(index)), &_wireSeen)"
        }
        let required = properties.filter { !$0.optional }.map { "let _\($0.name)" }
        let arguments = properties.map { "_\($0.name)" }.joined(separator: ", ")
        return """
                \(access)static func read(from reader: inout JSONFastReader) -> Self? {
            \(locals.joined(separator: "\n"))
                    var _wireSeen: UInt64 = 0
                    let _wireComplete = reader.object { reader, key in
                        switch key {
            \(cases.joined(separator: "\n"))
                        default: return reader.skipValue()
                        }
                    }
                    guard \((["_wireComplete"] + required).joined(separator: ", ")) else { return nil }
                    return \(properties.isEmpty ? "Self()" : "Self(_wire: \(arguments))")
                }
            """
    }

    private func initializer() -> String {
        guard !properties.isEmpty else { return "" }
        let parameters = properties.enumerated().map { index, property in
            "\(index == 0 ? "_wire " : "_ ")\(property.name): \(property.type)\(property.optional ? "?" : "")"
        }
        let assignments = properties.map { "        self.\($0.name) = \($0.name)" }
        return """
                init(\(parameters.joined(separator: ", "))) {
            \(assignments.joined(separator: "\n"))
                }
            """
    }

    private func schema(access: String) -> String {
        let members = properties.map { property in
            let rules = property.rules.map { ", rules: WireRules(\($0))" } ?? ""
            return
                "            WireProperty(\(literal(property.key)), WireSchema.of(\(property.type).self), required: \(!property.optional), "
                + "description: \(optionalLiteral(property.documentation))\(rules)),"
        }
        return """
                \(access)static var wireSchema: WireSchema {
                    .model(WireModelSchema(Self.self, description: \(optionalLiteral(documentation))) {
                        [
            \(members.joined(separator: "\n"))
                        ]
                    })
                }
            """
    }

    private func validation(access: String) -> String {
        let checks = properties.map { property -> String in
            let rules = property.rules.map { "WireRules(\($0))" } ?? "WireRules()"
            return "        try \(rules).check(self.\(property.name), \(literal(property.key)), in: path)"
        }
        return """
                \(access)func validate(at path: String) throws(WireViolation) {
            \(checks.joined(separator: "\n"))
                }
            """
    }
}

extension String {
    func replacingBackticks() -> String { filter { $0 != "`" } }
}
