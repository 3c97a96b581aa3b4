import Foundation
import Wire

@testable import RideCtlKit

/// One ride across the processes, as the exported spans of issue 24's conventions show it (times in
/// milliseconds after 10:00:00 UTC): booked through the gateway, offered by the orders reactor,
/// accepted (waiting 50 ms in the broker's queue), a trip created by trips, picking up, two ETAs
/// from the trip's watch; and another order's request, which must not show.
enum RideTraceFixture {
    static let orderID = "o-42"
    static let tripID = "t-7"
    static let base: UInt64 = 1_764_064_800 * 1_000_000_000  // 2025-11-25T10:00:00Z

    static let booking = String(repeating: "a", count: 32)
    static let acceptance = String(repeating: "b", count: 32)
    static let watch = String(repeating: "c", count: 32)
    static let other = String(repeating: "d", count: 32)

    static func span(
        _ trace: String, _ id: Int, parent: Int? = nil, _ name: String, _ kind: Span.Kind, _ service: String, _ start: Double,
        _ end: Double,
        _ attributes: [String: String] = [:]
    ) -> Span {
        Span(
            traceID: trace, spanID: String(format: "%016x", id), parentSpanID: parent.map { String(format: "%016x", $0) }, name: name,
            kind: kind,
            service: service, instance: "\(service)-1", start: base + UInt64((start * 1_000_000).rounded()),
            end: base + UInt64((end * 1_000_000).rounded()), attributes: attributes
        )
    }

    static let order = [Span.Attribute.orderID: orderID]
    static func status(_ status: String, type: String? = nil) -> [String: String] {
        var attributes = [Span.Attribute.orderID: orderID, Span.Attribute.orderStatus: status]
        if let type { attributes[Span.Attribute.eventType] = type }
        return attributes
    }
    static let mdp = ["rpc.system": "mdp"]

    static let spans: [Span] = [
        // Booking: POST /v1/orders → orders.create (NEW) → the reactor offers it.
        span(booking, 1, "POST /v1/orders", .server, "ride-gateway", 0, 20),
        span(booking, 2, parent: 1, "call orders.create", .client, "ride-gateway", 1, 19, mdp),
        span(booking, 3, parent: 2, "op orders.create", .server, "ride-orders", 3, 15, status("NEW")),
        span(booking, 4, parent: 3, "db.commit", .internal, "ride-orders", 10, 14),
        span(booking, 5, parent: 3, "publish order.status", .producer, "ride-orders", 16, 16.5, status("NEW", type: "order.status")),
        span(booking, 6, parent: 5, "react orders order.status", .consumer, "ride-orders", 21, 40, status("NEW")),
        span(booking, 7, parent: 6, "dispatch.round", .internal, "ride-orders", 22, 30, order),
        span(booking, 9, parent: 6, "db.commit", .internal, "ride-orders", 31, 35),
        span(
            booking, 8, parent: 6, "publish order.offered", .producer, "ride-orders", 45, 45.2,
            order.merging([Span.Attribute.eventType: "order.offered"]) { $1 }),
        // Acceptance: the request waits 50 ms for a worker; the reactor creates the trip, then PICKING_UP.
        span(acceptance, 11, "POST /v1/orders/{id}/accept", .server, "ride-gateway", 2000, 2063),
        span(acceptance, 12, parent: 11, "call orders.accept", .client, "ride-gateway", 2001, 2061, mdp),
        span(acceptance, 13, parent: 12, "op orders.accept", .server, "ride-orders", 2051, 2060, status("ACCEPTED")),
        span(acceptance, 14, parent: 13, "db.commit", .internal, "ride-orders", 2055, 2058),
        span(
            acceptance, 15, parent: 13, "publish order.status", .producer, "ride-orders", 2062, 2062.1,
            status("ACCEPTED", type: "order.status")),
        span(acceptance, 16, parent: 15, "react orders order.status", .consumer, "ride-orders", 2070, 2100, status("ACCEPTED")),
        span(acceptance, 17, parent: 16, "call trips.create", .client, "ride-orders", 2071, 2090, mdp),
        span(acceptance, 18, parent: 17, "op trips.create", .server, "ride-trips", 2072, 2088, [Span.Attribute.tripID: tripID]),
        span(acceptance, 19, parent: 18, "db.commit", .internal, "ride-trips", 2080, 2086),
        span(
            acceptance, 20, parent: 18, "publish trip.created", .producer, "ride-trips", 2089, 2089.1,
            [Span.Attribute.tripID: tripID, Span.Attribute.eventType: "trip.created"]),
        span(acceptance, 21, parent: 16, "db.commit", .internal, "ride-orders", 2091, 2094),
        span(
            acceptance, 22, parent: 16, "publish order.status", .producer, "ride-orders", 2096, 2096.2,
            status("PICKING_UP", type: "order.status")),
        // Notifications react too, and publish a notification: not a step of the ride.
        span(
            acceptance, 23, parent: 15, "react notifications order.status", .consumer, "ride-notifications", 2065, 2067, status("ACCEPTED")),
        span(
            acceptance, 24, parent: 23, "publish notification", .producer, "ride-notifications", 2068, 2068.1,
            order.merging([Span.Attribute.eventType: "notification"]) { $1 }),
        // The trip's watch publishes ETAs in traces of its own.
        span(watch, 31, "trip.watch", .internal, "ride-trips", 5000, 5002, [Span.Attribute.tripID: tripID]),
        span(
            watch, 32, parent: 31, "publish trip.eta", .producer, "ride-trips", 5001, 5001.1,
            [Span.Attribute.tripID: tripID, Span.Attribute.eventType: "trip.eta"]),
        span(watch, 33, "trip.watch", .internal, "ride-trips", 6000, 6002, [Span.Attribute.tripID: tripID]),
        span(
            watch, 34, parent: 33, "publish trip.eta", .producer, "ride-trips", 6001, 6001.1,
            [Span.Attribute.tripID: tripID, Span.Attribute.eventType: "trip.eta"]),
        // Another order.
        span(
            other, 41, "op orders.create", .server, "ride-orders", 3000, 3010,
            [Span.Attribute.orderID: "o-other", Span.Attribute.orderStatus: "NEW"]),
        span(
            other, 42, parent: 41, "publish order.status", .producer, "ride-orders", 3012, 3013,
            [Span.Attribute.orderID: "o-other", Span.Attribute.orderStatus: "NEW"]),
    ]

    /// The spans as an OTLP JSON export request, one resource per service (as the exporters send).
    static func otlpJSON(_ spans: [Span]) -> String {
        let services = Array(Set(spans.map(\.service))).sorted()
        let resources: [JSONValue] = services.map { service in
            let mine = spans.filter { $0.service == service }
            return [
                "resource": ["attributes": [attribute("service.name", service), attribute("service.instance.id", "\(service)-1")]],
                "scopeSpans": [["scope": ["name": "ride"], "spans": .array(mine.map(otlp))]],
            ]
        }
        return (try? JSONCoding.encodeText(["resourceSpans": .array(resources)] as JSONValue)) ?? ""
    }

    static func attribute(_ key: String, _ value: String) -> JSONValue { ["key": .string(key), "value": ["stringValue": .string(value)]] }

    static func otlp(_ span: Span) -> JSONValue {
        let kinds: [Span.Kind] = [.unspecified, .internal, .server, .client, .producer, .consumer]
        var object: [String: JSONValue] = [
            "traceId": .string(span.traceID), "spanId": .string(span.spanID), "name": .string(span.name),
            "kind": .number(Double(kinds.firstIndex(of: span.kind) ?? 0)), "startTimeUnixNano": .string(String(span.start)),
            "endTimeUnixNano": .string(String(span.end)),
            "attributes": .array(span.attributes.sorted { $0.key < $1.key }.map { attribute($0.key, $0.value) }),
            "status": [:],
        ]
        if let parent = span.parentSpanID { object["parentSpanId"] = .string(parent) }
        return .object(object)
    }
}
