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
    let settings: GatewaySettings

    func register(public open: RecordedRoutes, authenticated routes: RecordedRoutes) {
        open.on(.post, "users") { request, context in
            try await platform.forward(Ops.Users.register, .object(try await RequestJSON.object(request, context: context)))
        }
        open.on(.post, "sessions") { request, context in
            try await platform.forward(Ops.Users.login, .object(try await RequestJSON.object(request, context: context)))
        }

        routes.on(.get, "me") { _, context in
            try await platform.forward(Ops.Users.get, ["id": .string(try context.requireUser().id)])
        }
        routes.on(.patch, "me") { request, context in
            var body = try await RequestJSON.object(request, context: context)
            guard !body.isEmpty else {
                throw GatewayError(.unprocessableContent, "invalid_params", "(body): nothing to change; give name, phone_number, device_id or car")
            }
            let user = try context.requireUser()
            body["id"] = .string(user.id)
            defer { tokens.forget(userID: user.id) }
            return try await platform.forward(Ops.Users.update, .object(body))
        }
        routes.on(.put, "me/availability") { request, context in
            let body = try await RequestJSON.object(request, context: context)
            guard case .bool(let available)? = body["available"] else {
                throw GatewayError(.unprocessableContent, "invalid_params", "available: required, true or false")
            }
            // As the driver SDK says it: device intents (with the user id dispatch looks for) in a batch without fixes.
            let user = try context.requireUser()
            let intents: JSONValue = [
                "available": .bool(available), "name": .string(user.name), "metadata": ["user_id": .string(user.id)],
                "changed_at": .string(RFC3339.format(Date())),
            ]
            return try await forwardBatch([
                "publishable_key": .string(settings.publishableKey), "device_id": .string(try driverDevice(context)),
                "batch_id": .number(Double(Int(Date().timeIntervalSince1970 * 1000))), "device": intents, "locations": [],
            ])
        }
        routes.on(.post, "devices/{device_id}/locations") { request, context in
            let deviceID = try context.parameters.require("device_id")
            guard deviceID == (try driverDevice(context)) else {
                throw GatewayError(.forbidden, "not_your_device", "device \(deviceID.prefix(64)) is not the device of this driver")
            }
            var body = try await RequestJSON.object(request, context: context)
            body["device_id"] = .string(deviceID)
            body["publishable_key"] = .string(settings.publishableKey)
            // Dispatch finds drivers by their device's `user_id` metadata: the gateway vouches for it.
            if let device = body["device"], device.objectValue == nil {
                throw GatewayError(.unprocessableContent, "invalid_params", "device: expected an object")
            }
            var intents = body["device"]?.objectValue ?? [:]
            var metadata = intents["metadata"]?.objectValue ?? [:]
            metadata["user_id"] = .string(try context.requireUser().id)
            intents["metadata"] = .object(metadata)
            body["device"] = .object(intents)
            return try await forwardBatch(.object(body))
        }

        routes.on(.get, "notifications") { request, context in
            var params: [String: JSONValue] = ["user_id": .string(try context.requireUser().id)]
            if let limit = try RequestJSON.number(request, "limit") { params["limit"] = .number(limit) }
            return try await platform.forward(Ops.Notifications.list, .object(params))
        }
        routes.on(.post, "notifications/push_tokens") { request, context in
            let body = try await RequestJSON.object(request, context: context)
            return try await platform.forward(
                Ops.Notifications.registerPushToken,
                ["user_id": .string(try context.requireUser().id), "token": body["token"] ?? .null])
        }
        routes.on(.post, "orders") { request, context in
            var body = try await RequestJSON.object(request, context: context)
            body["caller"] = try context.caller()
            return try await platform.forward(Ops.Orders.create, .object(body))
        }
        routes.on(.get, "orders") { request, context in
            try await platform.forward(Ops.Orders.list, try listParams(request, context))
        }
        routes.on(.get, "orders/{id}") { _, context in
            try await platform.forward(Ops.Orders.get, .object(try context.orderParams()))
        }
        for (path, op) in [
            ("accept", Ops.Orders.accept), ("decline", Ops.Orders.decline), ("start", Ops.Orders.startRide), ("end", Ops.Orders.endRide),
            ("cancel", Ops.Orders.cancel),
        ] {
            routes.on(.post, "orders/{id}/\(path)") { request, context in
                var params = try context.orderParams()
                if op.name == Ops.Orders.cancel.name { params["reason"] = try await RequestJSON.object(request, context: context)["reason"] }
                return try await platform.forward(op, .object(params))
            }
        }
        registerRideExtras(routes)
        routes.on(.get, "orders/{id}/share") { _, context in
            let order = try await platform.call(Ops.Orders.get, .object(try context.orderParams()))
            guard let tripID = order.tripID else {
                throw GatewayError(.conflict, "no_trip", "order \(order.id) has no trip yet (status \(order.status.rawValue)); a share link exists once a driver is on the way")
            }
            let trip = try await platform.call(Ops.Trips.get, ["trip_id": .string(tripID)])
            return try JSONBody.response(ShareLink(shareID: trip.shareID, shareURL: "\(settings.publicURL)/\(trip.shareID)", tripID: trip.tripID))
        }
        routes.on(.get, "orders/{id}/summary") { _, context in
            let order = try await platform.call(Ops.Orders.get, .object(try context.orderParams()))
            guard order.status == .completed, let summary = order.summary else {
                throw GatewayError(.conflict, "not_completed", "order \(order.id) is \(order.status.rawValue); its summary comes with COMPLETED")
            }
            return try JSONBody.response(RideSummary(orderID: order.id, summary: summary, fare: order.fare))
        }
    }

    /// What a taxi app adds (AxRide): chat, ratings, payments, history, earnings, fare estimates, saved places.
    func registerRideExtras(_ routes: RecordedRoutes) {
        routes.on(.get, "orders/{id}/messages") { request, context in
            var params = try context.orderParams()
            if let after = try RequestJSON.number(request, "after") { params["after"] = .number(after) }
            if let limit = try RequestJSON.number(request, "limit") { params["limit"] = .number(limit) }
            return try await platform.forward(Ops.Orders.messages, .object(params))
        }
        routes.on(.post, "orders/{id}/messages") { request, context in
            var params = try context.orderParams()
            params["text"] = try await RequestJSON.object(request, context: context)["text"] ?? .null
            return try await platform.forward(Ops.Orders.sendMessage, .object(params))
        }
        routes.on(.post, "orders/{id}/rating") { request, context in
            var params = try context.orderParams()
            let body = try await RequestJSON.object(request, context: context)
            params["stars"] = body["stars"] ?? .null
            params["comment"] = body["comment"]
            return try await platform.forward(Ops.Orders.rate, .object(params))
        }
        routes.on(.get, "orders/{id}/payment") { _, context in
            try await platform.forward(Ops.Orders.payment, .object(try context.orderParams()))
        }
        routes.on(.post, "fares/estimate") { request, context in
            var body = try await RequestJSON.object(request, context: context)
            body["caller"] = try context.caller()
            return try await platform.forward(Ops.Orders.estimate, .object(body))
        }
        routes.on(.get, "me/history") { request, context in
            var params: [String: JSONValue] = ["caller": try context.caller()]
            if let before = request.uri.queryParameters.get("before") { params["before"] = .string(before) }
            if let limit = try RequestJSON.number(request, "limit") { params["limit"] = .number(limit) }
            return try await platform.forward(Ops.Orders.history, .object(params))
        }
        routes.on(.get, "me/earnings") { request, context in
            var params: [String: JSONValue] = ["caller": try context.caller()]
            if let days = try RequestJSON.number(request, "days") { params["days"] = .number(days) }
            return try await platform.forward(Ops.Orders.earnings, .object(params))
        }
        routes.on(.get, "me/places") { _, context in
            try await platform.forward(Ops.Users.places, ["user_id": .string(try context.requireUser().id)])
        }
        routes.on(.post, "me/places") { request, context in
            var body = try await RequestJSON.object(request, context: context)
            body["user_id"] = .string(try context.requireUser().id)
            return try await platform.forward(Ops.Users.savePlace, .object(body))
        }
        routes.on(.delete, "me/places/{place_id}") { _, context in
            try await platform.forward(
                Ops.Users.deletePlace,
                ["user_id": .string(try context.requireUser().id), "id": .string(try context.parameters.require("place_id"))])
        }
    }

    /// A batch to `tracking.ingest`. Tracking refusing the gateway's own publishable key is the
    /// operator's mistake, not the app's: a 500 that says which setting, never the app's 401.
    func forwardBatch(_ batch: JSONValue) async throws -> Response {
        let reply = try await platform.reply(Ops.Tracking.ingest, batch)
        if reply.status == Status.unauthorized {
            throw GatewayError(.internalServerError, "misconfigured", "tracking refuses the gateway's publishable key (--publishable-key, RIDE_PUBLISHABLE_KEY)")
        }
        return JSONBody.response(reply)
    }

    /// `GET /v1/orders?status=NEW&latitude=…&longitude=…&radius=…&limit=…`: the caller's own
    /// orders (a driver: accepted by or offered to them), or with a point, the orders of a status near it.
    func listParams(_ request: Request, _ context: GatewayContext) throws -> JSONValue {
        var params: [String: JSONValue] = ["caller": try context.caller()]
        if let status = request.uri.queryParameters.get("status") { params["status"] = .string(status) }
        if let limit = try RequestJSON.number(request, "limit") { params["limit"] = .number(limit) }
        let latitude = try RequestJSON.number(request, "latitude")
        let longitude = try RequestJSON.number(request, "longitude")
        switch (latitude, longitude) {
        case (let latitude?, let longitude?):
            params["near"] = .object([
                "latitude": .number(latitude), "longitude": .number(longitude),
                "radius": .number(try RequestJSON.number(request, "radius") ?? 5000),
            ])
        case (nil, nil): break
        default: throw GatewayError(.unprocessableContent, "invalid_params", "latitude and longitude: give both or neither")
        }
        return .object(params)
    }

    func driverDevice(_ context: GatewayContext) throws -> String {
        let user = try context.requireUser()
        guard user.role == .driver else { throw GatewayError(.forbidden, "drivers_only", "only drivers report locations and availability") }
        guard let deviceID = user.deviceID else { throw GatewayError(.conflict, "no_device", "this driver has no device_id; set one with PATCH /v1/me") }
        return deviceID
    }
}

/// `GET /v1/orders/{id}/share`.
struct ShareLink: Codable, Sendable, Equatable {
    var shareID: String
    var shareURL: String
    var tripID: String

    enum CodingKeys: String, CodingKey {
        case shareID = "share_id"
        case shareURL = "share_url"
        case tripID = "trip_id"
    }
}

/// `GET /v1/orders/{id}/summary`.
struct RideSummary: Codable, Sendable, Equatable {
    var orderID: String
    var summary: TripSummary
    var fare: Fare?

    enum CodingKeys: String, CodingKey {
        case orderID = "order_id"
        case summary, fare
    }
}
