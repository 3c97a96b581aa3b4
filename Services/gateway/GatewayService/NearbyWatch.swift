import Bus
import Foundation
import HummingbirdWebSocket
import RideContract
import RideModels
import Wire

/// Nearby cars over `/v1/me/live`: the client sends `{"watch_nearby":{"latitude","longitude",
/// "radius"?,"dropoff_latitude"?,"dropoff_longitude"?}}` (the query of `GET /v1/drivers/nearby`)
/// and receives `{"type":"nearby_cars","nearby_cars":{…}}` now and every `interval` while it
/// watches; `{"watch_nearby":null}` stops. One watch per connection: a new one replaces it, and
/// it ends with the connection. A refused watch (a driver, a bad coordinate) is one
/// `{"type":"error","status","error"}` message, and the connection stays open.
enum NearbyWatch {
    static let interval: Duration = .seconds(5)
    /// The largest client message read (a watch is a few numbers).
    static let maxMessage = 4096
    /// Client messages a connection may send (each watch asks orders at once): 30 at once, then
    /// one every 2 s. More is an error message (429) and the connection closed with 4429.
    static let messages = RateLimit(perMinute: 30)

    /// What a client message asks.
    enum Ask: Equatable {
        /// Watch with these params of `orders.nearby_cars` (the caller filled in).
        case watch(JSONValue)
        case stop
        /// Not a message about nearby cars: ignored.
        case other
        /// A watch that is not an object: a 422 with this message.
        case invalid(String)
    }

    static func ask(_ text: String, caller: JSONValue) -> Ask {
        guard let message = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8)), let watch = message["watch_nearby"] else { return .other }
        switch watch {
        case .null: return .stop
        case .object(var params):
            params["caller"] = caller
            return .watch(.object(params))
        default: return .invalid("watch_nearby: expected an object {latitude, longitude, radius?, dropoff_latitude?, dropoff_longitude?} or null")
        }
    }

    /// Reads the client's messages until it closes, running at most one watch at a time.
    static func receive(_ inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, caller: JSONValue, platform: PlatformCalls) async throws {
        var watching: Task<Void, Never>?
        defer { watching?.cancel() }
        var budget = RateLimiter<Int>(capacity: 1)
        for try await message in inbound.messages(maxSize: maxMessage) {
            if let refusal = budget.take([(key: 0, limit: messages)], at: .now) {
                let why = "more than \(messages) messages on this connection; connect again in \(refusal.retryAfterSeconds) s"
                try await outbound.write(.text(LiveRoute.text(LiveRoute.error(status: 429, code: "too_many_messages", message: why))))
                try await outbound.close(.unknown(4429), reason: "too_many_messages")
                return
            }
            guard case .text(let text) = message else { continue }
            switch ask(text, caller: caller) {
            case .other: continue
            case .stop:
                watching?.cancel()
                watching = nil
            case .invalid(let why):
                try await outbound.write(.text(LiveRoute.text(LiveRoute.error(status: Status.unprocessable, code: "invalid_params", message: why))))
            case .watch(let params):
                watching?.cancel()
                watching = Task { await watch(params, outbound: outbound, platform: platform) }
            }
        }
    }

    /// `nearby_cars` every `interval` until cancelled or refused.
    static func watch(_ params: JSONValue, outbound: WebSocketOutboundWriter, platform: PlatformCalls) async {
        while !Task.isCancelled {
            do {
                let reply = try await platform.reply(Ops.Orders.nearbyCars, params)
                let body = try JSONCoding.decode(JSONValue.self, from: reply.json)
                guard reply.isSuccess else {
                    let refusal = body["error"] ?? ["code": "error", "message": "nearby cars unavailable"]
                    try await outbound.write(.text(LiveRoute.text(["type": "error", "status": .number(Double(reply.status)), "error": refusal])))
                    return
                }
                guard !Task.isCancelled else { return }
                try await outbound.write(.text(LiveRoute.text(["type": "nearby_cars", "nearby_cars": body])))
            } catch is CancellationError {
                return
            } catch {
                // The bus or the connection failed: the next round tries again; a closed connection cancels the watch.
            }
            try? await Task.sleep(for: interval)
        }
    }
}
