import SwiftSyntax
import SwiftSyntaxMacros

/// `@Catalog("Op", "Ops.events")`: adds `public static let catalog` to an enum — the `descriptor`
/// of each of its static constants made by a call of one of the named types or functions, in
/// declaration order — so that a list of the contract's ops or events is never written by hand.
public struct CatalogMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard case .argumentList(let arguments) = node.arguments else {
            throw WireMacroError("@Catalog names the types or functions whose values it lists")
        }
        let callees = Set(
            arguments.compactMap {
                $0.expression.as(StringLiteralExprSyntax.self)?.segments.compactMap { $0.as(StringSegmentSyntax.self)?.content.text }
                    .joined()
            })
        var names: [String] = []
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), variable.modifiers.contains(where: { $0.name.text == "static" })
            else { continue }
            for binding in variable.bindings {
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
                    let call = binding.initializer?.value.as(FunctionCallExprSyntax.self),
                    let callee = call.calledExpression.trimmedDescription.split(separator: "<").first,
                    callees.contains(String(callee))
                else { continue }
                names.append(name)
            }
        }
        guard !names.isEmpty else {
            throw WireMacroError("@Catalog found no static constant made by \(callees.sorted().joined(separator: " or "))")
        }
        return ["public static let catalog = [\(raw: names.map { "\($0).descriptor" }.joined(separator: ", "))]"]
    }
}
