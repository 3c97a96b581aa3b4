import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@WireModel`: derives `WireValue` — the one-pass JSON writer and reader and the JSON Schema —
/// from a struct's stored properties and `CodingKeys`, or from a `String` enum's raw values.
/// What it generates is what Foundation's synthesized `Codable` does with the same declaration:
/// keys sorted by UTF-8 bytes (`JSONEncoder`'s `sortedKeys`), absent optionals left out, `null`
/// read as absent; the reader gives up (nil) on a repeated key.
public struct WireModelMacro: ExtensionMacro, MemberMacro {
    /// A struct's `CodingKeys` when it declares none: each stored property's name in snake_case.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else { return [] }
        let description = try WireStructDescription(structDecl)
        if description.declaresDerivableKeys {
            throw WireMacroError("\(structDecl.name.text)'s CodingKeys are what @WireModel derives (each name in snake_case): remove them")
        }
        return description.derivedCodingKeys.map { ["\(raw: $0)"] } ?? []
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let access = Self.access(of: declaration)
        let source: String
        if let enumDecl = declaration.as(EnumDeclSyntax.self) {
            source = try WireEnumDescription(enumDecl).extensionSource(type: type.trimmedDescription, access: access)
        } else if let structDecl = declaration.as(StructDeclSyntax.self) {
            source = try WireStructDescription(structDecl).extensionSource(type: type.trimmedDescription, access: access)
        } else {
            throw WireMacroError("@WireModel applies to a struct or to an enum with String raw values")
        }
        return [try ExtensionDeclSyntax("\(raw: source)")]
    }

    /// `public ` for a public or open type (its conformance's members must be too), else nothing.
    static func access(of declaration: some DeclGroupSyntax) -> String {
        let public_ = declaration.modifiers.contains { ["public", "open"].contains($0.name.text) }
        return public_ ? "public " : ""
    }
}

/// `@WireKeys`: a struct's `CodingKeys` as `@WireModel` derives them (each name in snake_case, or
/// its `@WireKey`), for a `Codable` type that is not a wire model (a member of it is not one).
public struct WireKeysMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else { throw WireMacroError("@WireKeys applies to a struct") }
        let description = try WireStructDescription(structDecl)
        guard let keys = description.derivedCodingKeys else {
            throw WireMacroError("\(structDecl.name.text) declares CodingKeys: @WireKeys derives them, so remove one or the other")
        }
        return ["\(raw: keys)"]
    }
}

/// `@WireField(...)` and `@WireKey(...)`: markers that `@WireModel` reads; they generate nothing.
public struct WireFieldMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

struct WireMacroError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The text of the doc comment (`///` lines or a `/** */` block) in `trivia`, on one line; nil if none.
func documentation(in trivia: Trivia) -> String? {
    var lines: [String] = []
    for piece in trivia {
        switch piece {
        case .docLineComment(let text):
            lines.append(String(text.dropFirst(3)).trimmingWhitespace())
        case .docBlockComment(let text):
            lines.append(String(text.dropFirst(3).dropLast(2)).trimmingWhitespace())
        case .newlines, .spaces, .tabs, .carriageReturnLineFeeds, .carriageReturns: break
        default: lines = []  // a plain comment or code between: not this declaration's doc
        }
    }
    let text = lines.filter { !$0.isEmpty }.joined(separator: " ")
    return text.isEmpty ? nil : text
}

/// A Swift string literal of `text`.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// `nil` or a literal.
func optionalLiteral(_ text: String?) -> String { text.map(literal) ?? "nil" }

extension String {
    func trimmingWhitespace() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
