import Bus
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import RideContract
import RideModels
import Wire

/// `POST /v1/providers/hypertrack/webhook`: HyperTrack as a tracking source, for an operator whose
/// driver app runs HyperTrack's SDK. The `x-hypertrack-signature` header is HyperTrack's proof
/// (no bearer token); its locations reach tracking as the driver's phone's own batches would —
/// so trips see the driver arrive — and its `destination_arrival` events are reported as the
/// order's driver's arrival, the driver read from tracking's owner of the device, the place checked
/// by orders against the device's last position. Off (404) without `--hypertrack-webhook-secret`.
struct HyperTrackWebhookRoute {
    let platform: PlatformCalls
    let settings: GatewaySettings
    let seen = SeenDeliveries()

    static let bodyLimit = 1 << 20
    static let signatureHeader = HTTPField.Name("x-hypertrack-signature")!

    func register(on open: RecordedRoutes) {
        open.on(
            .post, "providers/hypertrack/webhook",
            RouteDoc(
                "HyperTrack's webhook endpoint: locations and trip arrivals of drivers tracked by HyperTrack's SDK", tag: .operators,
                description:
                    "The body is HyperTrack's JSON array of events as sent; x-hypertrack-signature must be the hex HMAC-SHA256 of it with the webhook secret. Events older than 15 minutes, or a delivery taken before, are refused (409).",
                reply: HyperTrackWebhookReceipt.self, "what was taken and what was ignored, and why", errors: [400, 401, 404, 409],
                op: "\(Ops.Tracking.ingest.fullName), \(Ops.Tracking.device.fullName), \(Ops.Orders.arrive.fullName)")
        ) { request, _ in
            guard let secret = settings.hyperTrackWebhookSecret else {
                throw GatewayError(
                    .notFound, "not_configured", "HyperTrack webhooks are off: start the gateway with --hypertrack-webhook-secret")
            }
            guard let signature = request.headers[Self.signatureHeader] else {
                throw GatewayError(
                    .unauthorized, "missing_signature",
                    "x-hypertrack-signature: required (the hex HMAC-SHA256 of the body with the webhook secret)")
            }
            let body = Array(try await request.body.collect(upTo: Self.bodyLimit).readableBytesView)
            guard HyperTrackDelivery.signatureIsValid(signature, body: body, secret: secret) else {
                throw GatewayError(.unauthorized, "bad_signature", "x-hypertrack-signature does not sign this body with the webhook secret")
            }
            let digest = Array(SHA256.hash(data: body))
            guard await !seen.contains(digest) else {
                throw GatewayError(.conflict, "replayed", "this delivery was taken before (the same signed body): nothing done again")
            }
            let delivery: HyperTrackDelivery
            switch Result(catching: { () throws(HyperTrackWebhookProblem) in try HyperTrackDelivery(body: body) }) {
            case .success(let read): delivery = read
            case .failure(.malformed(let problem)): throw GatewayError(.badRequest, "invalid_events", problem)
            case .failure(.stale(let problem)): throw GatewayError(.conflict, "stale", problem)
            }
            let receipt = await apply(delivery)
            await seen.insert(digest)
            return try JSONBody.response(status: .ok, receipt)
        }
    }

    /// The locations first (so an arrival is judged by the device's newest position), then the arrivals.
    func apply(_ delivery: HyperTrackDelivery) async -> HyperTrackWebhookReceipt {
        var receipt = HyperTrackWebhookReceipt(
            received: delivery.count, taken: 0, ignored: delivery.ignored.map(HyperTrackWebhookReceipt.Item.init))
        for (deviceID, locations) in delivery.locations.sorted(by: { $0.key < $1.key }) {
            let indexes = delivery.locationEvents[deviceID] ?? []
            let batch = IngestBatch(
                publishableKey: settings.publishableKey, deviceID: deviceID,
                batchID: UInt64(max(0, (locations.last?.recordedAt.timeIntervalSince1970 ?? 0) * 1000)),
                locations: locations)
            if let refusal = await refusal(of: try? await platform.reply(Ops.Tracking.ingest, batch)) {
                receipt.ignored += indexes.map {
                    .init(index: $0, type: "location", reason: "tracking refused the device's locations: \(refusal)")
                }
            } else {
                receipt.taken += indexes.count
            }
        }
        for arrival in delivery.arrivals {
            let device = try? await platform.call(Ops.Tracking.device, DeviceParams(deviceID: arrival.deviceID))
            guard let driver = device?.metadata["user_id"]?.stringValue else {
                receipt.ignored.append(
                    .init(index: arrival.index, type: "trip", reason: "device \(arrival.deviceID.prefix(64)) has no driver here"))
                continue
            }
            let params = OrderParams(caller: Caller(role: .driver, id: driver), id: arrival.orderID)
            if let refusal = await refusal(of: try? await platform.reply(Ops.Orders.arrive, params)) {
                receipt.ignored.append(.init(index: arrival.index, type: "trip", reason: "the arrival was not taken: \(refusal)"))
            } else {
                receipt.taken += 1
            }
        }
        receipt.ignored.sort { $0.index < $1.index }
        return receipt
    }

    /// Nil when the reply is a success; otherwise its error's message (or that none came).
    func refusal(of reply: ServiceReply?) async -> String? {
        guard let reply else { return "no answer" }
        guard !reply.isSuccess else { return nil }
        let error = try? JSONCoding.decode(JSONValue.self, from: reply.json)
        return "\(reply.status) \(error?["error"]?["message"]?.stringValue ?? error?["error"]?["code"]?.stringValue ?? "")"
    }
}

/// The signed bodies this gateway took in the last `HyperTrackDelivery.maximumAge` (and some): a
/// delivery sent again is refused as a replay. Older ones are refused by their `created_at`.
actor SeenDeliveries {
    private var seen: [[UInt8]: Date] = [:]
    static let keep: TimeInterval = HyperTrackDelivery.maximumAge + 300
    static let limit = 100_000

    func contains(_ digest: [UInt8]) -> Bool { seen[digest] != nil }

    func insert(_ digest: [UInt8], now: Date = Date()) {
        if seen.count >= Self.limit { seen = seen.filter { now.timeIntervalSince($0.value) < Self.keep } }
        if seen.count >= Self.limit, let oldest = seen.min(by: { $0.value < $1.value }) { seen[oldest.key] = nil }
        seen[digest] = now
    }
}

/// What a HyperTrack delivery came to.
@WireModel
struct HyperTrackWebhookReceipt: Codable, Sendable, Equatable {
    @WireModel
    struct Item: Codable, Sendable, Equatable {
        var index: Int
        var type: String
        var reason: String

        init(index: Int, type: String, reason: String) { (self.index, self.type, self.reason) = (index, type, reason) }
        init(_ ignored: HyperTrackDelivery.Ignored) { self.init(index: ignored.index, type: ignored.type, reason: ignored.reason) }
    }

    var received: Int
    var taken: Int
    var ignored: [Item]
}
