import Foundation
import Wire

/// Random JSON shaped by a `WireSchema`. Plain values are what the platform's own writers send
/// (the fast path must read every one JSONDecoder accepts); wild ones (`wild = true`) add the
/// near misses a client sends: a missing member, an unknown key, an out-of-range enum, a
/// malformed time, a string that needs escapes, numbers with exponents or many digits.
struct WireGenerator<Random: RandomNumberGenerator> {
    var random: Random
    var wild = false

    mutating func value(_ schema: WireSchema, rules: WireRules = WireRules(), depth: Int = 0) -> JSONValue {
        switch schema {
        case .string(let format): return .string(format == "date-time" ? time() : string(rules))
        case .integer: return .number(Double(integer(rules)))
        case .number: return .number(number(rules))
        case .boolean: return .bool(Bool.random(using: &random))
        case .any: return any(depth: depth)
        case .array(let element):
            if !wild, case .number = element {
                return .array([
                    .number(number(WireRules(minimum: -90, maximum: 90))), .number(number(WireRules(minimum: -90, maximum: 90))),
                ])
            }
            let count = depth > 4 ? 0 : Int.random(in: 0...3, using: &random)
            return .array((0..<count).map { _ in value(element, depth: depth + 1) })
        case .map(let element):
            let count = depth > 4 ? 0 : Int.random(in: 0...2, using: &random)
            return .object(Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", value(element, depth: depth + 1)) }))
        case .enumeration(let enumeration):
            return .string(wild && chance(0.05) ? "NOT_A_VALUE" : enumeration.values.randomElement(using: &random)!)
        case .model(let model):
            var members: [String: JSONValue] = [:]
            for property in model.properties {
                if property.required, !(wild && chance(0.02)) {
                    members[property.key] = value(property.schema, rules: property.rules, depth: depth + 1)
                } else if !property.required, depth < 5 {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0...5: members[property.key] = value(property.schema, rules: property.rules, depth: depth + 1)
                    case 6: members[property.key] = .null
                    default: break
                    }
                }
            }
            if wild, chance(0.1) { members["unknown_member"] = any(depth: 3) }
            return .object(members)
        }
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &random) < probability }

    mutating func string(_ rules: WireRules) -> String {
        // A pattern that is a literal (`^Point$`) is the literal; others get a plain string.
        if let pattern = rules.pattern, pattern.hasPrefix("^"), pattern.hasSuffix("$"),
            !pattern.dropFirst().dropLast().contains(where: { "[](){}*+?|\\.".contains($0) })
        {
            return String(pattern.dropFirst().dropLast())
        }
        let plain = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ +")
        let special: [Character] = ["\"", "\\", "/", "\n", "\t", "\u{1}", "é", "Ж", "🚕", "<"]
        let length = Int.random(in: (rules.minLength ?? 0)...min(rules.maxLength ?? 12, 12), using: &random)
        return String(
            (0..<length).map { _ in wild && chance(0.05) ? special.randomElement(using: &random)! : plain.randomElement(using: &random)! })
    }

    mutating func integer(_ rules: WireRules) -> Int {
        let low = Int(rules.minimum ?? -1_000_000)
        let high = Int(rules.maximum ?? 1_000_000)
        switch Int.random(in: wild ? 0..<10 : 2..<10, using: &random) {
        case 0: return Int.random(in: -(1 << 53)...(1 << 53), using: &random)
        case 1: return [low - 1, high + 1, 0, -1].randomElement(using: &random)!
        default: return Int.random(in: low...max(low, high), using: &random)
        }
    }

    mutating func number(_ rules: WireRules) -> Double {
        let low = rules.minimum ?? -200
        let high = rules.maximum ?? 200
        switch Int.random(in: 0..<10, using: &random) {
        case 0...2 where !wild: return Double(Int.random(in: Int(low.rounded(.up))...Int(max(low, high).rounded(.down)), using: &random))
        case 0: return Double(Int.random(in: -100...100, using: &random))
        case 1: return Double.random(in: -1e-6...1e-6, using: &random)
        case 2: return Double.random(in: -1e21...1e21, using: &random)
        default: return Double.random(in: low...max(low, high), using: &random)
        }
    }

    mutating func time() -> String {
        let date = Date(timeIntervalSince1970: Double.random(in: 1_600_000_000...1_900_000_000, using: &random))
        switch Int.random(in: wild ? 0..<10 : 4..<10, using: &random) {
        case 0: return "2026-11-21T09:30:00Z"
        case 1: return "2026-11-21T11:30:00.5+02:00"
        case 2: return "2026-13-01T00:00:00Z"
        case 3: return "2026-11-21T09:30:00.123456789Z"
        default: return RFC3339.format(date)
        }
    }

    mutating func any(depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(number(WireRules()))
        case 3: return .string(string(WireRules()))
        case 4: return .array((0..<Int.random(in: 0...2, using: &random)).map { _ in any(depth: depth + 1) })
        default:
            return .object(
                Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...2, using: &random)).map { ("m\($0)", any(depth: depth + 1)) }))
        }
    }

    /// `bytes` with one to three random edits: bytes removed, JSON pieces put in, a byte replaced.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        let pieces: [[UInt8]] = [
            "\"", "\\", "{", "}", "[", "]", ",", ":", "null", "0", "-", ".", "e", " ", "\"x\":1,", "1e3", "\\u0041", "true",
        ]
        .map { Array($0.utf8) }
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(contentsOf: pieces.randomElement(using: &random)!, at: at)
            default: bytes[at] = pieces.randomElement(using: &random)!.first!
            }
        }
        return bytes
    }
}
