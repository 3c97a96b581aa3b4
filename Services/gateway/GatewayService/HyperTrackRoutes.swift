import Bus
import Foundation
import HTTPTypes
import Hummingbird
import RideContract
import RideModels
import Wire

/// HyperTrack's v3 routes as the sample's Cloud Function calls them (docs/services/gateway.md, HyperTrack-compatible routes),
/// with HTTP Basic auth (account id, secret key): code written for those endpoints points here.
struct HyperTrackRoutes {
    let platform: PlatformCalls
    let settings: GatewaySettings

    func register(on routes: RecordedRoutes) {
        routes.on(
            .post, "trips",
            RouteDoc(
                "HyperTrack v3: create a trip", tag: .hyperTrack, body: CreateTripParams.wireSchema.members,
                replies: [201, 200].map {
                    .init(
                        status: $0, description: $0 == 201 ? "the new trip" : "the trip of this idempotency key",
                        content: .json(Trip.wireSchema))
                },
                fieldRules: Self.coordinateRules, op: Ops.Trips.create.fullName)
        ) { request, context in
            var params = try await RequestJSON.object(request, context: context)
            try IdempotencyKey.stamp(&params, from: request)
            return try await trip(try await platform.reply(Ops.Trips.create, body: .object(params)))
        }
        for (method, path, op, summary) in [
            (HTTPRequest.Method.get, "trips/{trip_id}", Ops.Trips.get, "HyperTrack v3: a trip"),
            (.post, "trips/{trip_id}/complete", Ops.Trips.complete, "HyperTrack v3: complete a trip (adds its summary)"),
        ] {
            routes.on(
                method, path,
                RouteDoc(summary, tag: .hyperTrack, path: ["trip_id": "the trip's id"], reply: Trip.self, "the trip", op: op.fullName)
            ) { request, context in
                let params = TripIDParams(tripID: try context.parameters.require("trip_id"))
                return try await trip(try await platform.reply(op, params, keyedBy: method == .post ? request : nil))
            }
        }
        routes.on(
            .post, "devices/nearby",
            OpRoute(
                Ops.Tracking.nearby, tag: .hyperTrack, summary: "HyperTrack v3: devices near a point, nearest first", fill: [:],
                body: .rest,
                fieldRules: Self.coordinateRules), calling: platform)
    }

    /// What GeoJSON's `coordinates` must be beyond two numbers.
    static let coordinateRules = "coordinates are [longitude, latitude], the longitude within ±180 and the latitude within ±90"

    /// A trips reply with its share URL made absolute, as HyperTrack's `views.share_url` is (a
    /// trip made without a link has none).
    func trip(_ reply: ServiceReply) async throws -> Response {
        guard reply.isSuccess, case .object(var trip) = try JSONCoding.decode(JSONValue.self, from: reply.json),
            let relative = trip["views"]?["share_url"]?.stringValue
        else {
            return JSONBody.response(reply)
        }
        trip["views"] = ["share_url": .string(settings.publicURL + relative), "embed_url": .string(settings.publicURL + relative)]
        return try JSONBody.response(status: .init(code: reply.status), JSONValue.object(trip))
    }
}

/// HTTP Basic with the account id and secret key: the HyperTrack routes and the operator's
/// dashboard data. Wrong credentials count against the client address's attempts
/// (`RateLimits.Failure.wrongOperatorCredentials`): guessing the key is as slow as guessing a password.
struct BasicAuthentication: RouterMiddleware {
    typealias Context = GatewayContext
    let accountID: String
    let secretKey: String
    let limits: RateLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("basic ") else {
            throw Self.challenge
        }
        try limits.admit(before: .wrongOperatorCredentials, request, context)
        guard
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)).map({
                String(decoding: $0, as: UTF8.self)
            }),
            Self.constantTimeEqual(decoded, "\(accountID):\(secretKey)")
        else {
            limits.note(.wrongOperatorCredentials, request, context)
            throw Self.challenge
        }
        return try await next(request, context)
    }

    static let challenge = GatewayError(
        .unauthorized, "unauthorized", "this route needs HTTP Basic auth with the account id and secret key (--account-id, --secret-key)",
        headers: [.wwwAuthenticate: "Basic realm=\"ridesharing\""])

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
