import SwiftSyntax

/// An enum with `String` raw values: its cases' raw values (written, or the case's name).
struct WireEnumDescription {
    let values: [String]
    let documentation: String?

    init(_ decl: EnumDeclSyntax) throws {
        let inherits = decl.inheritanceClause?.inheritedTypes.map(\.type.trimmedDescription) ?? []
        guard inherits.first == "String" else {
            throw WireMacroError("@WireModel derives an enum only with String raw values (\(decl.name.text))")
        }
        documentation = WireMacros.documentation(in: decl.leadingTrivia)
        var values: [String] = []
        for member in decl.memberBlock.members {
            guard let cases = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in cases.elements {
                guard element.parameterClause == nil else {
                    throw WireMacroError(
                        "@WireModel derives an enum only without associated values (\(decl.name.text).\(element.name.text))")
                }
                if let raw = element.rawValue?.value.as(StringLiteralExprSyntax.self) {
                    values.append(raw.segments.compactMap { $0.as(StringSegmentSyntax.self)?.content.text }.joined())
                } else {
                    values.append(element.name.text.replacingBackticks())
                }
            }
        }
        self.values = values
    }

    func extensionSource(type: String, access: String) -> String {
        """
        extension \(type): WireValue {
            \(access)func writeJSON(to out: inout [UInt8]) { JSONText.appendQuoted(rawValue, to: &out) }
            \(access)static func read(from reader: inout JSONFastReader) -> Self? { reader.string().flatMap(Self.init(rawValue:)) }
            \(access)static var wireSchema: WireSchema {
                .enumeration(WireEnumSchema(Self.self, values: [\(values.map(literal).joined(separator: ", "))], description: \(optionalLiteral(documentation))))
            }
        }
        """
    }
}
