import Bus
import Foundation
import Logging
import ServiceKit
import Testing

/// The histograms and counters as a scrape shows them: an op's answer counts in its histogram
/// under its service, op and outcome; libraries' metrics come out under the declared names.
@Suite struct MetricsWiringTests {
    static let logger = Logger(label: "metrics-test")

    static func scrape(_ metrics: ServiceMetrics) -> String { String(decoding: metrics.render(), as: UTF8.self) }

    /// The value of the series `series` (name and labels exactly as rendered); nil when absent.
    static func value(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    static func request(_ op: String, _ json: String = "{}") -> ServiceRequest {
        ServiceRequest(op: op, json: Array(json.utf8))
    }

    @Test func anAnsweredOpCountsInItsHistogramUnderItsServiceOpAndOutcome() async throws {
        let metrics = ServiceMetrics()
        var router = OpRouter(service: "demo")
        router.on("echo") { (params: [String: Int], _) -> [String: Int] in params }
        router.on("fail") { (_: NoParams, _) -> NoParams in throw ServiceError(status: 503, code: "down", message: "down") }
        router = OpMetrics(service: "demo", metrics: metrics).timing(router)

        for _ in 0..<3 { _ = await router.reply(to: Self.request("echo", #"{"a":1}"#), logger: Self.logger) }
        _ = await router.reply(to: Self.request("echo", "[1]"), logger: Self.logger)
        _ = await router.reply(to: Self.request("fail"), logger: Self.logger)
        _ = await router.reply(to: Self.request("no-such-op-\(UUID())"), logger: Self.logger)

        let text = Self.scrape(metrics)
        let name = RideMetric.opDuration.name
        #expect(Self.value(#"\#(name)_count{service="demo",op="echo",outcome="ok"}"#, in: text) == 3, "\(text)")
        #expect(Self.value(#"\#(name)_count{service="demo",op="echo",outcome="refused"}"#, in: text) == 1)
        #expect(Self.value(#"\#(name)_count{service="demo",op="fail",outcome="error"}"#, in: text) == 1)
        #expect(
            Self.value(#"\#(name)_count{service="demo",op="_unknown",outcome="refused"}"#, in: text) == 1,
            "an unknown op's name is not a label value")
        #expect(!text.contains("no-such-op"))
        // Every bucket declared once, the largest +Inf.
        let buckets = text.split(separator: "\n").filter { $0.hasPrefix("\(name)_bucket{service=\"demo\",op=\"echo\",outcome=\"ok\"") }
        #expect(buckets.count == RideMetric.durationBuckets.count + 1, "\(buckets)")
        #expect(Self.value(#"\#(name)_bucket{service="demo",op="echo",outcome="ok",le="+Inf"}"#, in: text) == 3)
    }

    @Test func aRouterWithoutMetricsAnswersAsBefore() async throws {
        var router = OpRouter(service: "demo")
        router.on("echo") { (params: [String: Int], _) -> [String: Int] in params }
        let reply = await router.reply(to: Self.request("echo", #"{"a":1}"#), logger: Self.logger)
        #expect(reply.status == 200)
    }

    @Test func aTimerFamilyRecordsEachLabelSetApart() {
        let metrics = ServiceMetrics()
        let family = TimerFamily(RideMetric.reactionLatency, in: metrics)
        family.record(.milliseconds(3), ["ACCEPTED->PICKING_UP"])
        family.record(.milliseconds(700), ["ACCEPTED->PICKING_UP"])
        family.record(.seconds(-1), ["PICKING_UP->REACHED_PICKUP"])
        let text = Self.scrape(metrics)
        let name = RideMetric.reactionLatency.name
        #expect(Self.value(#"\#(name)_count{transition="ACCEPTED->PICKING_UP"}"#, in: text) == 2, "\(text)")
        #expect(Self.value(#"\#(name)_bucket{transition="ACCEPTED->PICKING_UP",le="0.005"}"#, in: text) == 1)
        #expect(Self.value(#"\#(name)_bucket{transition="ACCEPTED->PICKING_UP",le="1.0"}"#, in: text) == 2)
        let sum = Self.value(#"\#(name)_sum{transition="ACCEPTED->PICKING_UP"}"#, in: text) ?? 0
        #expect(abs(sum - 0.703) < 1e-6)
        #expect(Self.value(#"\#(name)_sum{transition="PICKING_UP->REACHED_PICKUP"}"#, in: text) == 0, "a negative duration counts as 0")
        #expect(text.contains("# HELP \(name) "))
    }

    /// Hummingbird's MetricsMiddleware names (`hb.requests`, `http.route`) are not Prometheus
    /// names: the factory renames them to the declared ones.
    @Test func librariesMetricsComeOutUnderTheDeclaredNames() {
        let metrics = ServiceMetrics()
        let factory = metrics.factory
        let labels = [("http.route", "/v1/orders/{id}"), ("http.request.method", "GET"), ("http.response.status_code", "200")]
        factory.makeCounter(label: "hb.requests", dimensions: labels).increment(by: 2)
        factory.makeTimer(label: "http.server.request.duration", dimensions: labels).recordNanoseconds(2_000_000)
        factory.makeCounter(label: "some.library.thing", dimensions: [("a.b", "c")]).increment(by: 1)
        let text = Self.scrape(metrics)
        let series = #"{route="/v1/orders/{id}",method="GET",status="200"}"#
        #expect(Self.value(RideMetric.httpRequests.name + series, in: text) == 2, "\(text)")
        #expect(Self.value(RideMetric.httpDuration.name + "_count" + series, in: text) == 1)
        #expect(
            Self.value(#"\#(RideMetric.httpDuration.name)_bucket{route="/v1/orders/{id}",method="GET",status="200",le="0.0025"}"#, in: text)
                == 1)
        #expect(Self.value(#"some_library_thing{a_b="c"}"#, in: text) == 1)
        #expect(!text.contains("hb."))
    }

    @Test func outcomesByStatus() {
        #expect(OpMetrics.Outcome(status: 200) == .ok)
        #expect(OpMetrics.Outcome(status: 201) == .ok)
        #expect(OpMetrics.Outcome(status: 404) == .refused)
        #expect(OpMetrics.Outcome(status: 499) == .refused)
        #expect(OpMetrics.Outcome(status: 500) == .error)
        #expect(OpMetrics.Outcome(status: 503) == .error)
    }
}
