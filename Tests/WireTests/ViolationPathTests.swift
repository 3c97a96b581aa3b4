import Testing
import Wire

@WireModel
struct ViolationPoint: Codable {
    @WireField(minimum: -90, maximum: 90) var latitude: Double
    @WireField(pattern: "^[a-z]+$", meaning: "lowercase letters") var name: String?
}

@WireModel
struct ViolationBatch: Codable {
    @WireField(maxItems: 3) var points: [ViolationPoint]
    var near: ViolationPoint?
    var named: [String: ViolationPoint]?
}

/// A violation names where it is, however deep: members, array elements, map values, and a
/// pattern compiled once and used again.
@Suite struct ViolationPathTests {
    typealias Batch = ViolationBatch

    static func point(_ latitude: Double, _ name: String? = nil) -> ViolationPoint { ViolationPoint(latitude: latitude, name: name) }

    @Test func aViolationIsNamedWhereItIs() {
        #expect(Batch(points: [Self.point(1), Self.point(2, "ok")]).ruleViolation == nil)
        #expect(Batch(points: [Self.point(1), Self.point(100)]).ruleViolation == "points[1].latitude: must be from -90 to 90, got 100")
        #expect(Batch(points: [Self.point(1, "Bad")]).ruleViolation == "points[0].name: must be lowercase letters")
        #expect(Batch(points: [Self.point(1, "Bad")]).ruleViolation == "points[0].name: must be lowercase letters", "the pattern again")
        #expect(Batch(points: [], near: Self.point(-91)).ruleViolation == "near.latitude: must be from -90 to 90, got -91")
        #expect(Batch(points: [], named: ["home": Self.point(95)]).ruleViolation == "named.home.latitude: must be from -90 to 90, got 95")
        #expect(Batch(points: Array(repeating: Self.point(0), count: 4)).ruleViolation == "points: must have at most 3 items, got 4")
        #expect(throws: WireViolation(path: "params.points[0].latitude", problem: "must be from -90 to 90, got 91")) {
            try Batch(points: [Self.point(91)]).validate(at: "params")
        }
    }
}
