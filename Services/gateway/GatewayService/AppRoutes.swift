import Bus
import Foundation
import HTTPTypes
import Hummingbird
import RideContract
import RideModels
import Wire

/// The REST API of the rider and driver apps, under `/v1`: each route checks who is asking (the
/// bearer token's user) and becomes one op on the bus with the caller filled in by the gateway —
/// whatever `caller` a body carries is replaced, so nobody can act as someone else.
struct AppRoutes {
    let platform: PlatformCalls
    let tokens: TokenCache
    let limits: RateLimits
    let settings: GatewaySettings

    var batches: DeviceBatches { DeviceBatches(platform: platform, publishableKey: settings.publishableKey) }

    func register(public open: RecordedRoutes, authenticated routes: RecordedRoutes) {
        // Sign-ups and log-ins are attempts of the client's address on the phone number's account.
        let limits = self.limits
        let attempt: @Sendable (JSONValue, Request, GatewayContext) throws -> Void = { params, request, context in
            try limits.admitAttempt(request, context, account: params["phone_number"]?.stringValue.map { "phone \($0.prefix(64))" })
        }
        open.on(
            .post, "users",
            OpRoute(
                Ops.Users.register, tag: .accounts, summary: "Sign up a rider or a driver", statuses: [201, 200], fill: [:], body: .rest,
                errors: [409, 429],
                fieldRules: "a driver needs a car and a device_id"), calling: platform, admit: attempt)
        open.on(
            .post, "sessions",
            OpRoute(
                Ops.Users.login, tag: .accounts,
                summary: "Log in: an access token (bearer, short-lived) for the other routes and a refresh token", fill: [:],
                body: .rest, errors: [401, 429]),
            calling: platform, admit: attempt)
        // A refresh is counted per session it names; one users refuses counts against the
        // address like a refused bearer token.
        let refresh = OpRoute(
            Ops.Users.refresh, tag: .accounts, summary: "A new access token and refresh token for a refresh token (each works once)",
            fill: [:],
            body: .rest, errors: [401, 429])
        open.on(.post, "auth/refresh", refresh.routeDoc) { request, context in
            let params = try await refresh.params(request, context, requestID: try IdempotencyKey.from(request))
            try limits.admitRefresh(request, context, refreshToken: params["refresh_token"]?.stringValue)
            let reply = try await platform.reply(refresh.op, body: params)
            if reply.status == Status.unauthorized,
                (try? JSONCoding.decode(ErrorBody.self, from: reply.json))?.error.code == "token_invalid"
            {
                limits.note(.invalidToken, request, context)
            }
            return JSONBody.response(reply)
        }
        // The bearer token names the session; the middleware has checked it.
        routes.on(
            .post, "auth/logout",
            RouteDoc(
                "Log out: the bearer token's session is revoked (its access and refresh tokens stop working)", tag: .accounts,
                reply: SessionEnded.self, "the session ended", errors: [401], op: Ops.Users.logout.fullName)
        ) { request, context in
            defer { tokens.forget(userID: context.user?.id ?? "") }
            return try await platform.forward(Ops.Users.logout, AuthenticateParams(token: BearerAuthentication.token(in: request) ?? ""))
        }

        routes.on(
            .get, "me", OpRoute(Ops.Users.get, tag: .accounts, summary: "The caller's profile", fill: ["id": .userID]), calling: platform)
        let update = OpRoute(
            Ops.Users.update, tag: .accounts,
            summary: "Change the caller's profile (name, phone_number, password, device_id, car); a new password logs out every session",
            fill: ["id": .userID, "session_id": .sessionID],
            body: .rest, nonEmptyBody: true, errors: [403, 409],
            fieldRules:
                "only drivers have a car; a new password or phone_number needs current_password, or a session that logged in within the last minutes (else 403 reauthentication_required)"
        )
        routes.on(.patch, "me", update.routeDoc) { request, context in
            let params = try await update.params(request, context, requestID: try IdempotencyKey.from(request))
            // Each try of a current password is a log-in attempt of the account: a stolen token
            // cannot guess its way to the password faster than a log-in could.
            if ["password", "phone_number", "current_password"].contains(where: { params[$0] != nil }) {
                try limits.admitAttempt(request, context, account: "user \(try context.requireUser().id)")
            }
            defer { tokens.forget(userID: context.user?.id ?? "") }
            return try await platform.forward(update.op, body: params)
        }
        routes.on(
            .get, "me/device",
            RouteDoc(
                "A driver's own device as tracking knows it: available for offers or not, active or not, its last position", tag: .drivers,
                reply: DeviceInfo.self, "the device", errors: [403, 404, 409], op: Ops.Tracking.device.fullName)
        ) { _, context in
            try await platform.forward(Ops.Tracking.device, DeviceParams(deviceID: try DeviceBatches.device(of: try context.requireUser())))
        }
        routes.on(
            .put, "me/availability",
            RouteDoc(
                "A driver goes available or unavailable for offers", tag: .drivers,
                body: [WireProperty("available", .boolean, required: true)],
                reply: IngestAck.self, "the acknowledgement of the device's new state", errors: [403, 409, 500],
                op: Ops.Tracking.ingest.fullName)
        ) { request, context in
            let body = try await RequestJSON.object(request, context: context)
            guard case .bool(let available)? = body["available"] else {
                throw GatewayError(.unprocessableContent, "invalid_params", "available: required, true or false")
            }
            // As the driver SDK says it: device intents in a batch without fixes. Availability only:
            // the device's name and metadata stay as the app set them; the user id dispatch looks
            // for is added to the metadata (merged, not replacing it) when it is not there yet.
            let user = try context.requireUser()
            let deviceID = try DeviceBatches.device(of: user)
            if available { try await batches.requireApproval(user.id) }
            var intents: [String: JSONValue] = ["available": .bool(available), "changed_at": .string(RFC3339.format(Date()))]
            let device = try await platform.reply(Ops.Tracking.device, DeviceParams(deviceID: deviceID))
            // An unknown device is new (its metadata starts with the user id); any other failure
            // is answered as it came, rather than taken for "no metadata" and the device's overwritten.
            guard device.isSuccess || device.status == Status.notFound else { return JSONBody.response(device) }
            let current = device.isSuccess ? try JSONCoding.decode(DeviceInfo.self, from: device.json) : nil
            if current?.metadata["user_id"] != .string(user.id) {
                intents["metadata"] = .object((current?.metadata ?? [:]).merging(["user_id": .string(user.id)]) { _, vouched in vouched })
            }
            if current?.name == nil { intents["name"] = .string(user.name) }
            var batch: [String: JSONValue] = [
                "publishable_key": .string(batches.publishableKey), "device_id": .string(deviceID),
                "batch_id": .number(Double(Int(Date().timeIntervalSince1970 * 1000))), "device": .object(intents), "locations": [],
            ]
            try IdempotencyKey.stamp(&batch, from: request, standingFor: ["available": .bool(available)])
            return JSONBody.response(try await batches.forward(batch))
        }
        routes.on(
            .post, "devices/{device_id}/locations",
            RouteDoc(
                "A driver's phone posts a batch of fixes (forwarded to tracking)", tag: .drivers,
                body: IngestBatch.wireSchema.members.filter { !["device_id", "publishable_key"].contains($0.key) },
                path: ["device_id": "the driver's own device id"], reply: IngestAck.self, "the acknowledgement", errors: [403, 409, 500],
                fieldRules: HyperTrackRoutes.coordinateRules, op: Ops.Tracking.ingest.fullName)
        ) { request, context in
            let deviceID = try context.parameters.require("device_id")
            let user = try context.requireUser()
            guard deviceID == (try DeviceBatches.device(of: user)) else {
                throw GatewayError(.forbidden, "not_your_device", "device \(deviceID.prefix(64)) is not the device of this driver")
            }
            var body = try await RequestJSON.object(request, context: context)
            try IdempotencyKey.stamp(&body, from: request)
            return JSONBody.response(try await batches.forward(try await batches.batch(body, from: user)))
        }

        routes.on(
            .get, "notifications",
            OpRoute(
                Ops.Notifications.list, tag: .notifications, summary: "The caller's notifications, newest first",
                fill: ["user_id": .userID], query: ["limit"]),
            calling: platform)
        routes.on(
            .post, "notifications/push_tokens",
            OpRoute(
                Ops.Notifications.registerPushToken, tag: .notifications, summary: "Register this phone's push token",
                fill: ["user_id": .userID], body: .rest),
            calling: platform)
        routes.on(
            .post, "orders",
            OpRoute(
                Ops.Orders.create, tag: .orders, summary: "A rider books a ride", statuses: [201, 200], body: .rest,
                errors: [403, 404, 409], fieldRules: Self.placeRules),
            calling: platform)
        routes.on(
            .get, "orders",
            OpRoute(
                Ops.Orders.list, tag: .orders, summary: "The caller's orders; for a driver with a point, the orders of a status near it",
                query: ["status", "limit", "near.latitude", "near.longitude", "near.radius"], errors: [403],
                fieldRules: "latitude and longitude come together, with status NEW (drivers only); radius only with them"),
            calling: platform)
        routes.on(.get, "orders/{id}", OpRoute(Ops.Orders.get, tag: .orders, path: ["id": "id"], errors: [403]), calling: platform)
        for (path, op) in [
            ("accept", Ops.Orders.accept), ("decline", Ops.Orders.decline), ("start", Ops.Orders.startRide), ("end", Ops.Orders.endRide),
            ("arrive", Ops.Orders.arrive), ("no-show", Ops.Orders.noShow),
        ] {
            routes.on(.post, "orders/{id}/\(path)", OpRoute(op, tag: .orders, path: ["id": "id"], errors: [403, 409]), calling: platform)
        }
        routes.on(
            .post, "orders/{id}/destination",
            OpRoute(
                Ops.Orders.changeDestination, tag: .orders, path: ["id": "id"], body: .rest, errors: [403, 409],
                fieldRules: "dropoff or dropoff_place_id, one of them"),
            calling: platform)
        routes.on(
            .post, "orders/{id}/cancel",
            OpRoute(Ops.Orders.cancel, tag: .orders, path: ["id": "id"], body: .only(["reason"]), errors: [403, 409]), calling: platform)
        registerRideExtras(routes)
        registerNavigation(routes)
        PaymentRoutes(platform: platform, limits: limits, publicURL: settings.publicURL).register(public: open, authenticated: routes)
        HyperTrackWebhookRoute(platform: platform, settings: settings).register(on: open)
        routes.on(
            .get, "orders/{id}/share",
            RouteDoc(
                "The ride's share link, made when its rider asks: one page that follows the driver to the pickup, the ride to the drop-off, then the route driven, until an hour after the ride",
                tag: .shareLinks, path: ["id": "the order's id"], reply: ShareLink.self, "the link", errors: [403],
                op: Ops.Orders.share.fullName)
        ) { _, context in
            let share = try await platform.call(Ops.Orders.share, try context.orderParams())
            return try JSONBody.response(
                ShareLink(shareID: share.shareID, shareURL: ShareRoutes.rideURL(share.shareID, settings: settings), orderID: share.orderID))
        }
        routes.on(
            .delete, "orders/{id}/share",
            OpRoute(
                Ops.Orders.revokeShare, tag: .shareLinks,
                summary: "The rider ends the ride's share link at once; asking again makes a new one",
                path: ["id": "id"], errors: [403]),
            calling: platform)
        routes.on(
            .get, "orders/{id}/summary",
            RouteDoc(
                "A completed ride's summary and fare", tag: .rides, path: ["id": "the order's id"], reply: RideSummary.self, "the summary",
                errors: [403, 409],
                op: Ops.Orders.get.fullName)
        ) { _, context in
            let order = try await platform.call(Ops.Orders.get, try context.orderParams())
            guard order.status == .completed, let summary = order.summary else {
                throw GatewayError(
                    .conflict, "not_completed", "order \(order.id) is \(order.status.rawValue); its summary comes with COMPLETED")
            }
            return try JSONBody.response(RideSummary(orderID: order.id, summary: summary, fare: order.fare))
        }
    }

    /// What a taxi app adds (AxRide): chat, ratings, payments, history, earnings, fare estimates, saved places.
    func registerRideExtras(_ routes: RecordedRoutes) {
        let order = ["id": "id"]
        routes.on(
            .get, "orders/{id}/messages", OpRoute(Ops.Orders.messages, tag: .rides, path: order, query: ["after", "limit"], errors: [403]),
            calling: platform)
        routes.on(
            .post, "orders/{id}/messages",
            OpRoute(Ops.Orders.sendMessage, tag: .rides, statuses: [201], path: order, body: .rest, errors: [403, 409]), calling: platform)
        routes.on(
            .post, "orders/{id}/rating", OpRoute(Ops.Orders.rate, tag: .rides, path: order, body: .rest, errors: [403, 409]),
            calling: platform)
        routes.on(
            .get, "orders/{id}/payment", OpRoute(Ops.Orders.payment, tag: .rides, path: order, errors: [403, 409]), calling: platform)
        routes.on(
            .post, "orders/{id}/payment",
            OpRoute(
                Ops.Orders.retryPayment, tag: .rides,
                summary: "The rider pays again for a ride whose charge failed, after fixing their card", path: order, errors: [403, 409]),
            calling: platform)
        routes.on(
            .post, "fares/estimate", OpRoute(Ops.Orders.estimate, tag: .rides, body: .rest, errors: [404], fieldRules: Self.placeRules),
            calling: platform)
        routes.on(
            .get, "drivers/nearby",
            OpRoute(
                Ops.Orders.nearbyCars, tag: .rides,
                summary:
                    "A rider sees the available cars near a point (positions only), the nearest's pickup ETA, and a quote with a dropoff",
                query: ["latitude", "longitude", "radius", "dropoff_latitude", "dropoff_longitude"], errors: [403],
                fieldRules: "dropoff_latitude and dropoff_longitude come together, the dropoff at least 50 m from the point"),
            calling: platform)
        routes.on(.get, "me/history", OpRoute(Ops.Orders.history, tag: .rides, query: ["before", "limit"]), calling: platform)
        routes.on(.get, "me/earnings", OpRoute(Ops.Orders.earnings, tag: .drivers, query: ["days"], errors: [403]), calling: platform)
        let user: [String: OpRoute<PlacesParams, SavedPlaces>.Filled] = ["user_id": .userID]
        routes.on(.get, "me/places", OpRoute(Ops.Users.places, tag: .accounts, fill: user), calling: platform)
        routes.on(
            .post, "me/places",
            OpRoute(
                Ops.Users.savePlace, tag: .accounts, statuses: [201], fill: ["user_id": .userID], body: .rest, errors: [409],
                fieldRules: "a place labelled other needs a name"),
            calling: platform)
        routes.on(
            .delete, "me/places/{place_id}", OpRoute(Ops.Users.deletePlace, tag: .accounts, fill: user, path: ["place_id": "id"]),
            calling: platform)
        routes.on(
            .post, "orders/{id}/reports",
            OpRoute(Ops.Orders.report, tag: .rides, statuses: [201], path: order, body: .rest, errors: [403]), calling: platform)
    }

    static let placeRules = "a pickup (or pickup_place_id) and a dropoff (or dropoff_place_id), the dropoff at least 50 m from the pickup"
}

/// `GET /v1/orders/{id}/share`.
@WireModel
struct ShareLink: Codable, Sendable, Equatable {
    var shareID: String
    var shareURL: String
    var orderID: String
}

/// `GET /v1/orders/{id}/summary`.
@WireModel
struct RideSummary: Codable, Sendable, Equatable {
    var orderID: String
    var summary: TripSummary
    var fare: Fare?
}
