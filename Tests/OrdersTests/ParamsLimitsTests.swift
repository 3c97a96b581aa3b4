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
        let inRange = try OpRouter.decodeParams(EarningsParams.self, op: "earnings", from: Array(#"{"caller":{"role":"driver","id":"d1"},"days":366}"#.utf8))
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

extension WireSchema {
    var modelProperties: [WireProperty] {
        if case .model(let model) = self { return model.properties }
        return []
    }
}
