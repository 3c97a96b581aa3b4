import Foundation
import Geo
import Logging
import Roads
import Testing

@testable import RoadServers

/// `OSRMRoutes` against a local server answering in OSRM's JSON (`FakeOSRMServer`).
@Suite struct OSRMRoutesTests {
    static let logger = Logger(label: "osrm-tests")

    /// 60 s by default: the answers are at once, but `make test` starts every suite at once, and the
    /// test process's two cooperative threads then have hundreds of tests queued before the reply's
    /// continuation (CI saw every call of this suite miss a 10-s deadline in that first minute).
    static func provider(_ base: URL, _ prefix: String, timeout: Duration = .seconds(60)) -> OSRMRoutes {
        OSRMRoutes(base: base.appendingPathComponent(prefix), timeout: timeout, logger: logger)
    }

    @Test func conformsOnTheHelsinkiPairs() async throws {
        try await FakeOSRMServer.with { base in
            let provider = Self.provider(base, "ok")
            #expect(provider.name == "osrm")
            await RouteProviderConformance.check(provider, pairs: HelsinkiPairs.pairs, snapDistance: 1)
            await RouteProviderConformance.checkOutside(provider, inside: HelsinkiPairs.railwaySquare, outside: HelsinkiPairs.farAway)
            await RouteProviderConformance.checkInvalid(provider, inside: HelsinkiPairs.railwaySquare)
        }
    }

    @Test func readsStepsAndTheirStartsFromTheAnswer() async throws {
        try await FakeOSRMServer.with { base in
            let route = try await Self.provider(base, "ok").route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi)
            #expect(route.steps.map(\.name) == ["Aleksanterinkatu", "Mikonkatu", "Mikonkatu"])
            #expect(route.steps.map(\.startIndex) == [0, 1, 2])
            #expect(route.line.points.count == 3)
            #expect(route.kind == .road)
        }
    }

    @Test func noRouteIsUnroutable() async throws {
        try await FakeOSRMServer.with { base in
            await Self.expect(Self.provider(base, "noroute"), .unroutable(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi))
        }
    }

    @Test func aSlowServerIsUnavailableAfterTheTimeout() async throws {
        try await FakeOSRMServer.with { base in
            let started = ContinuousClock.now
            await Self.expectUnavailable(Self.provider(base, "slow", timeout: .milliseconds(300)), containing: "did not answer within")
            // Room for the suite's load (a 0.3-s deadline ended 10.6 s, once 16.4 s, later in CI), short of the server's 180 s.
            #expect(ContinuousClock.now - started < .seconds(120), "the deadline, not the server's 180 s")
        }
    }

    @Test(arguments: [
        ("garbage", "not OSRM's route JSON"), ("broken", "HTTP 503"), ("partial", "without a route"), ("nothing-here", "HTTP 404"),
    ])
    func aWrongAnswerIsUnavailableNamingWhatWasWrong(prefix: String, text: String) async throws {
        try await FakeOSRMServer.with { base in
            await Self.expectUnavailable(Self.provider(base, prefix), containing: text)
        }
    }

    @Test func aServerThatIsNotThereIsUnavailable() async throws {
        await Self.expectUnavailable(OSRMRoutes(base: URL(string: "http://127.0.0.1:1")!, logger: Self.logger), containing: "127.0.0.1:1")
    }

    @Test func theRequestIsOSRMs() {
        let provider = OSRMRoutes(base: URL(string: "http://osrm.local:5000/")!, logger: Self.logger)
        let url = provider.requestURL(from: GeoPoint(latitude: 60.17, longitude: 24.94), to: GeoPoint(latitude: 60.16, longitude: 24.95))
        #expect(url == "http://osrm.local:5000/route/v1/driving/24.94,60.17;24.95,60.16?overview=full&geometries=geojson&steps=true")
    }

    static func expect(_ provider: OSRMRoutes, _ expected: RouteError, sourceLocation: SourceLocation = #_sourceLocation) async {
        do throws(RouteError) {
            _ = try await provider.route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi)
            Issue.record("a route", sourceLocation: sourceLocation)
        } catch {
            #expect(error == expected, sourceLocation: sourceLocation)
        }
    }

    static func expectUnavailable(_ provider: OSRMRoutes, containing text: String, sourceLocation: SourceLocation = #_sourceLocation) async
    {
        do throws(RouteError) {
            _ = try await provider.route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi)
            Issue.record("a route", sourceLocation: sourceLocation)
        } catch {
            guard case .unavailable(let why) = error else {
                Issue.record("\(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(why.contains(text), "\(why)", sourceLocation: sourceLocation)
        }
    }
}
