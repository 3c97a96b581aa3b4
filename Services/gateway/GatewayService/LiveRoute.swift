import Bus
import Foundation
import Hummingbird
import HummingbirdWebSocket
import RideContract
import RideModels
import Wire

/// `GET /v1/orders/{id}/live` (WebSocket): the rider or driver of an order receives every status
/// change, the driver's position and the ETA as they happen. Without `?after=`, the first message
/// is a snapshot carrying the `sequence` to resume after; with `?after=<sequence>` (the last
/// `sequence` received) the statuses missed meanwhile come first, in order, then live ones.
/// Statuses are sent once each, in version order, whatever the bus repeats.
///
/// Who may listen is decided after the upgrade: a refused upgrade could only be the WebSocket
/// library's bare `400`, while an error message and a close code (4000 + the HTTP status: 4401,
/// 4403, 4404, 4422) tell an app exactly what is wrong.
struct LiveRoute {
    let platform: PlatformCalls
    let hub: LiveHub
    let authentication: BearerAuthentication
    /// How often an open socket's token is checked again (`EdgePolicy.socketRecheck`).
    let recheck: Duration
    /// The sockets each user holds (`EdgePolicy.socketsPerUser`).
    let sockets: SocketAllowance
    /// How long a socket may send nothing (`EdgePolicy.socketIdle`).
    let idle: Duration
    /// Where a driver's batches sent on `/v1/me/live` go.
    let devices: DeviceBatches

    /// The WebSocket paths under /v1, with what the API document says of them.
    static let paths: [(path: String, doc: RouteDoc)] = [
        (
            orderPath,
            doc(
                "Live updates of an order over WebSocket (Upgrade: websocket)", tag: .orders,
                description:
                    "Text messages, one JSON object each, its `type` naming the kind (this response's `x-messages`): a `snapshot` first (without `after`), "
                    + "then every status change once each, in order, the driver's position and the trip's estimate, a new drop-off, the order's chat.",
                messages: LiveKinds.orderKinds,
                query: [
                    .init(
                        name: "after", schema: .integer, rules: .init(minimum: 0), required: false,
                        description: "the sequence of the last message received: what came since then comes first")
                ])
        ),
        (
            notificationsPath,
            doc(
                "The caller's notifications as they are made, over WebSocket (Upgrade: websocket)", tag: .notifications,
                description:
                    "Text messages, one JSON object each, its `type` naming the kind (this response's `x-messages`): the caller's notifications "
                    + "(missed ones are in GET /v1/notifications), and the answers to what the client sends. "
                    + "A rider may send {\"watch_nearby\":{latitude, longitude, radius?, dropoff_latitude?, dropoff_longitude?}} (the query of GET /v1/drivers/nearby) "
                    + "and receives {\"type\":\"nearby_cars\",\"nearby_cars\":{…}} now and every 5 s until {\"watch_nearby\":null} or a new watch. "
                    + "A driver may send {\"batch\":{batch_id, locations, device?, device_credential}} (the body of POST /v1/devices/{device_id}/locations with the session's device_credential, "
                    + "which tracking checks as its ingest socket does) and receives {\"type\":\"ack\",\"batch_id\",\"ack\":{…}} or {\"type\":\"error\",\"batch_id\",\"status\",\"error\"}, in order. "
                    + "Per connection, watches \(LiveClientMessages.watches) and batches \(LiveClientMessages.batches) (a minute's worth at once); more is an error (429) and close 4429.",
                messages: LiveKinds.userKinds
            )
        ),
    ]
    static let orderPath = "orders/{id}/live"
    static let notificationsPath = "me/live"

    func register(on routes: RouterGroup<GatewayContext>) {
        routes.ws(RouterPath(Self.orderPath)) { inbound, outbound, ws in
            var context = ws.requestContext
            guard let orderID = context.parameters.get("id") else { return }
            do {
                context.user = try await authentication.authenticate(ws.request, context: context)
                if let after = ws.request.uri.queryParameters.get("after"), UInt64(after) == nil {
                    throw GatewayError(
                        .unprocessableContent, "invalid_params",
                        "after: expected the sequence of the last message received, got '\(after.prefix(40))'")
                }
                _ = try await order(context)  // orders decides who may see the order
                guard sockets.take(try context.requireUser().id) else { throw sockets.refusal }
            } catch {
                await Self.refuse(error, outbound: outbound, context: context)
                return
            }
            defer { sockets.give(context.user?.id ?? "") }
            let (watcher, stream) = await hub.watch(orderID)
            do {
                let sent = try await opening(orderID: orderID, request: ws.request, context: context, outbound: outbound)
                let viewer = try context.requireUser()
                try await Self.relay(
                    stream, inbound: inbound, outbound: outbound,
                    statuses: StatusesOnce(lastSequence: sent.0, lastVersion: sent.1, viewer: viewer.id, lastChatSequence: sent.0),
                    tokenCheck: tokenCheck(ws.request, context), idle: idle, shownTo: Caller(viewer))
            } catch {
                context.logger.debug("live connection ended", metadata: ["order_id": "\(orderID)", "error": "\(error)"])
            }
            await hub.stop(orderID, watcher)
        }
    }

    /// `GET /v1/me/live` (WebSocket): the caller's notifications as they are made,
    /// `{"type":"notification","notification":{…}}`; missed ones are in `GET /v1/notifications`.
    func registerNotifications(on routes: RouterGroup<GatewayContext>) {
        routes.ws(RouterPath(Self.notificationsPath)) { inbound, outbound, ws in
            let user: User
            do {
                user = try await authentication.authenticate(ws.request, context: ws.requestContext)
                guard sockets.take(user.id) else { throw sockets.refusal }
            } catch {
                await Self.refuse(error, outbound: outbound, context: ws.requestContext)
                return
            }
            defer { sockets.give(user.id) }
            let (watcher, stream) = await hub.watchUser(user.id)
            do {
                try await Self.relay(
                    stream, inbound: inbound, outbound: outbound, statuses: StatusesOnce(),
                    tokenCheck: tokenCheck(ws.request, ws.requestContext), idle: idle,
                    shownTo: Caller(user)
                ) {
                    inbound in
                    try await LiveClientMessages.receive(inbound, outbound: outbound, user: user, platform: platform, devices: devices)
                }
            } catch {
                ws.requestContext.logger.debug("notification connection ended", metadata: ["user_id": "\(user.id)", "error": "\(error)"])
            }
            await hub.stopUser(user.id, watcher)
        }
    }

    /// A WebSocket route in the API document: a plain GET is told to upgrade (426).
    static func doc(
        _ summary: String, tag: RouteDoc.Tag, description: String, messages: [LiveKindDescriptor], query: [RouteDoc.Parameter] = []
    ) -> RouteDoc {
        let token = RouteDoc.Parameter(
            name: "access_token", schema: .string(), rules: .init(), required: false,
            description: "the bearer token, for clients that cannot set headers")
        return RouteDoc(
            summary, tag: tag,
            description: description
                + " Authorization is checked once the connection is open: a refused connection receives one message {\"type\":\"error\",\"status\":401|403|404|422,\"error\":{\"code\",\"message\"}} and is closed with code 4000 + status.",
            query: query + [token], replies: [.init(status: 101, description: "switching protocols", content: .webSocket(messages))],
            errors: [426])
    }

    func order(_ context: GatewayContext) async throws -> Order {
        try await platform.call(Ops.Orders.get, try context.orderParams())
    }

    /// What checks an open socket's token again, every `recheck`: it ends (after telling the app
    /// and closing, as at the opening) once the token is refused; other failures (users briefly
    /// unreachable) leave the socket open until the next check.
    struct TokenCheck: Sendable {
        let interval: Duration
        let context: GatewayContext
        let check: @Sendable () async throws -> Void

        func run(closing outbound: WebSocketOutboundWriter) async throws {
            while true {
                try await Task.sleep(for: interval)
                do {
                    try await check()
                } catch let error as GatewayError where error.status == .unauthorized {
                    await LiveRoute.refuse(error, outbound: outbound, context: context)
                    return
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    context.logger.debug("socket token check failed; kept open", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    func tokenCheck(_ request: Request, _ context: GatewayContext) -> TokenCheck {
        let authentication = authentication
        return TokenCheck(interval: recheck, context: context) { _ = try await authentication.authenticate(request, context: context) }
    }

    /// Sends the stream's messages until the client closes, or `tokenCheck` finds the token no
    /// longer good; `status` messages only once each.
    static func relay(
        _ stream: AsyncStream<LiveMessage>, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        statuses: StatusesOnce, tokenCheck: TokenCheck? = nil, idle: Duration? = nil, shownTo viewer: Caller? = nil,
        receive: @escaping @Sendable (WebSocketInboundStream) async throws -> Void = { inbound in for try await _ in inbound {} }
    ) async throws {
        let activity = SocketActivity()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await receive(inbound) }  // until the client closes
            if let tokenCheck {
                group.addTask { try await tokenCheck.run(closing: outbound) }
            }
            if let idle {
                group.addTask {
                    try await activity.waitUntilIdle(idle)
                    try await send(.error(status: 408, code: "idle", message: "nothing was sent for \(idle); connect again"), outbound)
                    try await outbound.close(.unknown(4408), reason: "idle")
                }
            }
            group.addTask {
                var statuses = statuses
                for await message in stream where statuses.admits(message) {
                    if case .accountSuspended(let userID) = message {
                        // The hub tells every connection; only the suspended person's closes.
                        guard let viewer, userID == viewer.id else { continue }
                        let body = LiveMessage.error(
                            status: 403, code: "account_suspended", message: "this account was suspended; contact support")
                        try await send(body, outbound)
                        try await outbound.close(.unknown(4403), reason: "account_suspended")
                        return
                    }
                    if statuses.revoked {
                        // Authorization was checked at the opening; the order has since moved away
                        // from this viewer (another driver took it): tell the app and close, as a refusal.
                        try await send(.error(status: 403, code: "forbidden", message: "this order is no longer offered to you"), outbound)
                        try await outbound.close(.unknown(4403), reason: "forbidden")
                        return
                    }
                    try await send(viewer.map { message.shown(to: $0) } ?? message, outbound)
                    activity.touch()
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Sends what comes before live messages; returns the last sequence covered and the order
    /// version the client now has.
    func opening(orderID: String, request: Request, context: GatewayContext, outbound: WebSocketOutboundWriter) async throws -> (
        UInt64, Int
    ) {
        if let after = request.uri.queryParameters.get("after").flatMap(UInt64.init),
            try await OrderEvents.lastSequence(platform) <= after + UInt64(EdgePolicy.replayLimit),
            let missed = try await OrderEvents.fetch(platform, after: after, limit: EdgePolicy.replayLimit)
        {
            var version = 0
            let user = try context.requireUser()
            for event in missed {
                guard let (_, message) = LiveHub.orderMessage(event, about: { $0 == orderID }), StatusesOnce.isParty(user.id, to: message)
                else { continue }
                try await Self.send(message.shown(to: Caller(user)), outbound)
                version = message.orderChange?.order.version ?? version
            }
            await hub.track(try await order(context))
            return (missed.last?.sequence ?? after, version)
        }
        // The sequence first, then the order: a status committed in between is both in the
        // snapshot and sent live, and the version check sends it once.
        let sequence = try await OrderEvents.lastSequence(platform)
        let current = try await order(context)
        await hub.track(current)
        try await Self.send(.snapshot(LiveSnapshot(sequence: sequence, order: current)), outbound)
        return (sequence, current.version)
    }

    /// Sends `{"type":"error","status":…,"error":{"code","message"}}`, then closes with 4000 + status.
    static func refuse(_ error: any Error, outbound: WebSocketOutboundWriter, context: GatewayContext) async {
        let refusal = GatewayError(answering: error, path: "live connection", method: "GET", logger: context.logger)
        let (status, code, message) = (refusal.status.code, refusal.code, refusal.message)
        try? await send(.error(status: status, code: code, message: message), outbound)
        try? await outbound.close(.unknown(UInt16(4000 + min(max(status, 400), 599))), reason: code)
    }

    /// Writes one message (never `accountSuspended`, which is the gateway's own).
    static func send(_ message: LiveMessage, _ outbound: WebSocketOutboundWriter) async throws {
        guard let text = message.text else { return }
        try await outbound.write(.text(text))
    }
}
