import Foundation
import Testing
import Wire

/// `JSONValue`'s writer against JSONEncoder with the platform's settings: the same bytes.
@Suite struct JSONValueWriterTests {
    let reference = JSONCoding.encoder()

    func expectSameBytes(_ value: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = try reference.encode(value)
        #expect(
            String(decoding: value.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self), sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        JSONValue.null, true, false, 0, -0.0, 42, -7, 0.1, 1.5e-7, 123456.789, 1e20, 9_007_199_254_740_993.0, -1e300,
        "", "plain", "quote \" and back\\slash", "a/b", "line\nfeed\ttab\rcr", "\u{8}\u{c}\u{1}\u{1f}", "Zaporizhzhia — Запоріжжя 🚕",
    ])
    func scalars(_ value: JSONValue) throws {
        try expectSameBytes(value)
    }

    @Test func nestedObjectsSortKeysByteWise() throws {
        try expectSameBytes([
            "zeta": 1, "Alpha": [1, "two", nil, [:]], "alpha": ["b": true, "a": ["é": 1, "e": 2, "~": 3]],
            "é": "accent", "_": [], "10": "ten", "9": "nine",
        ])
    }

    @Test func randomTrees() throws {
        var generator = SystemRandomNumberGenerator()
        func tree(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2:
                return .number(
                    Double.random(in: -1e6...1e6, using: &generator).rounded(.towardZero)
                        / [1, 10, 1000, 7][Int.random(in: 0..<4, using: &generator)])
            case 3:
                return .string(
                    String((0..<Int.random(in: 0..<8, using: &generator)).map { _ in "a\"\\/\nzé🚕 ".randomElement(using: &generator)! }))
            case 4: return .array((0..<Int.random(in: 0..<4, using: &generator)).map { _ in tree(depth + 1) })
            default:
                return .object(
                    Dictionary(
                        (0..<Int.random(in: 0..<5, using: &generator)).map { index in
                            ("k\(index)\(["", "é", "A", "_"].randomElement(using: &generator)!)", tree(depth + 1))
                        },
                        uniquingKeysWith: { first, _ in first }))
            }
        }
        for _ in 0..<300 {
            try expectSameBytes(tree(0))
        }
    }

    @Test func jsonCodingUsesTheWriter() throws {
        let value: JSONValue = ["b": 1, "a": [true, "x"]]
        #expect(try JSONCoding.encode(value) == value.jsonBytes)
        #expect(try JSONCoding.decode(JSONValue.self, from: JSONCoding.encode(value)) == value)
    }
}
