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
/// it ends with the connection (`LiveClientMessages` reads the connection's messages). A refused watch (a driver, a bad coordinate) is one
/// `{"type":"error","status","error"}` message, and the connection stays open.
enum NearbyWatch {
    static let interval: Duration = .seconds(5)
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
        ask(try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8)), caller: caller)
    }

    /// What a client message, already decoded (nil: not JSON), asks.
    static func ask(_ message: JSONValue?, caller: JSONValue) -> Ask {
        guard let watch = message?["watch_nearby"] else { return .other }
        switch watch {
        case .null: return .stop
        case .object(var params):
            params["caller"] = caller
            return .watch(.object(params))
        default:
            return .invalid(
                "watch_nearby: expected an object {latitude, longitude, radius?, dropoff_latitude?, dropoff_longitude?} or null")
        }
    }

    /// `nearby_cars` every `interval` until cancelled or refused.
    static func watch(_ params: JSONValue, outbound: WebSocketOutboundWriter, platform: PlatformCalls) async {
        while !Task.isCancelled {
            do {
                let reply = try await platform.reply(Ops.Orders.nearbyCars, body: params)
                guard reply.isSuccess else {
                    let refusal = (try? JSONCoding.decode(ErrorBody.self, from: reply.json))?.error
                    let error = refusal ?? ErrorBody(code: "error", message: "nearby cars unavailable").error
                    try await LiveRoute.send(.error(LiveError(status: reply.status, error: error)), outbound)
                    return
                }
                let cars = try JSONCoding.decode(NearbyCars.self, from: reply.json)
                guard !Task.isCancelled else { return }
                try await LiveRoute.send(.nearbyCars(LiveNearbyCars(nearbyCars: cars)), outbound)
            } catch is CancellationError {
                return
            } catch {
                // The bus or the connection failed: the next round tries again; a closed connection cancels the watch.
            }
            try? await Task.sleep(for: interval)
        }
    }
}
