import Bus
import RideModels
import Testing
import Wire

/// Limits a params type states with `@WireField` are checked by the router, as a 422 naming the
/// field, before any handler runs.
@Suite struct ParamsLimitsTests {
    @Test func aValueOutsideItsStatedRangeIs422NamingIt() throws {
        let json = Array(#"{"caller":{"role":"driver","id":"d1"},"days":400}"#.utf8)
        #expect(throws: ServiceError.unprocessable("invalid_params", "days: must be from 1 to 366, got 400")) {
            _ = try OpRouter.decodeParams(EarningsParams.self, op: "earnings", from: json)
        }
        let inRange = try OpRouter.decodeParams(
            EarningsParams.self, op: "earnings", from: Array(#"{"caller":{"role":"driver","id":"d1"},"days":366}"#.utf8))
        #expect(inRange.days == 366)
        let schema = try #require(EarningsParams.wireSchema.modelProperties.first { $0.key == "days" })
        #expect(schema.rules == WireRules(minimum: 1, maximum: 366), "and the schema states it")
    }

    @Test func aNumberBeyondItsTypeIs422NotInvalidJSON() {
        let json = Array(#"{"caller":{"role":"driver","id":"d1"},"days":-36786895743616612753939624005199724544}"#.utf8)
        #expect(throws: ServiceError.self) { _ = try OpRouter.decodeParams(EarningsParams.self, op: "earnings", from: json) }
        do {
            _ = try OpRouter.decodeParams(EarningsParams.self, op: "earnings", from: json)
        } catch {
            #expect(error.status == 422 && error.code == "invalid_params", "\(error)")
        }
        #expect(throws: ServiceError.badRequest("invalid_json", "the params frame of op 'earnings' is not valid JSON")) {
            _ = try OpRouter.decodeParams(EarningsParams.self, op: "earnings", from: Array("{nope".utf8))
        }
    }
}

/// The text patterns the params state read as JSON Schema reads them: the API's tests generate
/// values from the document with Python's regular expressions, the services check them with Swift's.
@Suite struct TextPatternsTests {
    func violation(_ rules: WireRules, _ text: String) -> String? {
        do throws(WireViolation) {
            try rules.check(string: text, at: "f")
            return nil
        } catch {
            return error.problem
        }
    }

    @Test func eachPatternAcceptsAndRefusesWhatItSays() {
        let cases: [(String, String, [String], [String])] = [
            ("line", TextPatterns.line, ["Ann", "Zoë Ng", " a ", "Prius Ⅱ"], ["", "   ", "a\u{7}b", "\t", "a\nb", "Ann\n", "\u{85}"]),
            ("message", TextPatterns.message, ["hi", "Here.\nBlue door.", " x "], ["", " \n\t ", "\u{1C}"]),
            (
                "phone", TextPatterns.phoneNumber, ["+380501234567", "+15550001"],
                ["380501234567", "+0501234567", "+1234567", "+1234567890123456", "+15550001\n", "+３８０５０１２３４５６"]
            ),
            (
                "device", TextPatterns.deviceID, ["phone-1", "a", String(repeating: "d", count: 128)],
                ["", "has space", String(repeating: "d", count: 129), "é", "d\n"]
            ),
            (
                "cursor", TextPatterns.historyCursor, ["1795275243918_o-3cb72d9a7ad8308c"],
                ["", "_o-1", "12_", "1234567890123456_o", "12_o-1\n", "x_o"]
            ),
        ]
        for (name, pattern, good, bad) in cases {
            let rules = WireRules(pattern: pattern, meaning: name)
            for text in good { #expect(violation(rules, text) == nil, "\(name) accepts \(text.debugDescription)") }
            for text in bad { #expect(violation(rules, text) == "must be \(name)", "\(name) refuses \(text.debugDescription)") }
        }
    }

    @Test func countsAndBoundsAreJSONSchemas() {
        #expect(violation(WireRules(maxLength: 3), "e\u{301}ab") == "must be at most 3 characters", "Unicode scalars, not characters")
        #expect(throws: WireViolation(path: "n", problem: "must be more than 0, got 0")) {
            try WireRules(exclusiveMinimum: 0).check(number: 0, at: "n")
        }
        #expect(throws: WireViolation(path: "c", problem: "must have 2 items, got 3")) {
            try WireRules(minItems: 2, maxItems: 2).check(count: 3, at: "c")
        }
        #expect(throws: WireViolation.self) { try WireRules.checkSafeInteger(9_007_199_254_740_992, at: "i") }
    }
}

extension WireSchema {
    var modelProperties: [WireProperty] {
        if case .model(let model) = self { return model.properties }
        return []
    }
}
