import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct WireMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [WireModelMacro.self, WireFieldMacro.self, WireKeysMacro.self, CatalogMacro.self]
}
