import Synchronization

/// Each `pattern` of the wire rules compiled once per process, not on every check: compiling a
/// regular expression took a third of validating a location batch on the ingest's path.
enum CompiledPatterns {
    /// `pattern` compiled with JSON Schema's (ECMA 262) reading, scalar by scalar; nil for a
    /// pattern that does not compile (which then matches nothing, as before the cache).
    static func regex(_ pattern: String) -> Regex<AnyRegexOutput>? {
        if let known = compiled.withLock({ $0[pattern] }) { return known?.regex }
        let made = (try? Regex(pattern)).map { Compiled($0.matchingSemantics(.unicodeScalar)) }
        compiled.withLock { $0[pattern] = made }
        return made?.regex
    }

    /// A regular expression shared by threads once it is whole.
    ///
    /// Safe to send (`@unchecked`): `Regex` is a value whose program is a class that lowers itself
    /// into its executable form on the first match. `init` makes that first match before the value
    /// is stored, so what threads share is never written again — they only read it (and retain it,
    /// which is atomic).
    private struct Compiled: @unchecked Sendable {
        let regex: Regex<AnyRegexOutput>
        init(_ regex: Regex<AnyRegexOutput>) {
            _ = "".firstMatch(of: regex)
            self.regex = regex
        }
    }

    /// The patterns are the schema's, a fixed few: the cache does not grow with input.
    private static let compiled = Mutex<[String: Compiled?]>([:])
}
