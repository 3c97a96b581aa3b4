/// A value that breaks a rule of its schema: where (`days`, `near.radius`) and what is wrong.
public struct WireViolation: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }

    /// This violation, found in a value checked at `""` (so its path is relative to that value),
    /// placed where the value is: `path` then its own (`locations` + `[3].lat`, `near` + `radius`).
    public func within(_ path: String) -> WireViolation {
        let own = self.path
        let full = own.isEmpty ? path : path.isEmpty ? own : own.hasPrefix("[") ? path + own : path + "." + own
        return WireViolation(path: full, problem: problem)
    }
}

extension WireRules {
    /// Checks a member (`key`, inside the value at `path`): these rules on it, then its own members'.
    /// Its path is spelled only for a violation: checked at `""`, then placed (`within`) — a valid
    /// batch of a thousand locations spells none of its thousands of paths.
    @inlinable
    public func check<Value: WireValue>(_ value: Value?, _ key: String, in path: String) throws(WireViolation) {
        guard let value else { return }
        do throws(WireViolation) {
            if !isEmpty { try value.check(self, at: "") }
            try value.validate(at: "")
        } catch {
            throw error.within(path.isEmpty ? key : path + "." + key)
        }
    }

    /// JSON's exact whole numbers, those a JavaScript client reads without loss: ±(2^53 − 1). The
    /// API document states this range for every integer that has no narrower rule.
    public static let safeInteger: Double = 9_007_199_254_740_991

    public static func checkSafeInteger(_ number: Double, at path: String) throws(WireViolation) {
        guard abs(number) > safeInteger else { return }
        throw WireViolation(path: path, problem: "must be a whole number from -9007199254740991 to 9007199254740991, got \(text(number))")
    }

    /// A number against `minimum` (or `exclusiveMinimum`) and `maximum`.
    public func check(number: Double, at path: String) throws(WireViolation) {
        if let exclusiveMinimum, number <= exclusiveMinimum {
            let upTo = maximum.map { " and at most \(Self.text($0))" } ?? ""
            throw WireViolation(path: path, problem: "must be more than \(Self.text(exclusiveMinimum))\(upTo), got \(Self.text(number))")
        }
        let tooSmall = minimum.map { number < $0 } ?? false
        let tooLarge = maximum.map { number > $0 } ?? false
        guard tooSmall || tooLarge else { return }
        let got = Self.text(number)
        switch (minimum, maximum) {
        case (let minimum?, let maximum?):
            throw WireViolation(path: path, problem: "must be from \(Self.text(minimum)) to \(Self.text(maximum)), got \(got)")
        case (let minimum?, nil): throw WireViolation(path: path, problem: "must be at least \(Self.text(minimum)), got \(got)")
        default: throw WireViolation(path: path, problem: "must be at most \(Self.text(maximum ?? 0)), got \(got)")
        }
    }

    /// A string against `minLength`, `maxLength` (in Unicode scalars, as JSON Schema counts) and `pattern`.
    public func check(string: String, at path: String) throws(WireViolation) {
        let length = string.unicodeScalars.count
        if let minLength, length < minLength {
            throw WireViolation(path: path, problem: minLength == 1 ? "must not be empty" : "must be at least \(minLength) characters")
        }
        if let maxLength, length > maxLength { throw WireViolation(path: path, problem: "must be at most \(maxLength) characters") }
        // As JSON Schema reads a pattern: found anywhere in the string (anchor it with ^…$ to mean all of it).
        // Unicode scalar by scalar, as JSON Schema's (ECMA 262) regular expressions read text.
        if let pattern, CompiledPatterns.regex(pattern).flatMap({ string.firstMatch(of: $0) }) == nil {
            throw WireViolation(path: path, problem: meaning.map { "must be \($0)" } ?? "must match \(pattern)")
        }
    }

    /// An array's length against `minItems` and `maxItems`.
    public func check(count: Int, at path: String) throws(WireViolation) {
        switch (minItems, maxItems) {
        case (let low?, let high?) where !(low...high).contains(count):
            throw WireViolation(
                path: path,
                problem: low == high ? "must have \(low) items, got \(count)" : "must have \(low) to \(high) items, got \(count)")
        case (let low?, nil) where count < low: throw WireViolation(path: path, problem: "must have at least \(low) items, got \(count)")
        case (nil, let high?) where count > high: throw WireViolation(path: path, problem: "must have at most \(high) items, got \(count)")
        default: return
        }
    }

    static func text(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
