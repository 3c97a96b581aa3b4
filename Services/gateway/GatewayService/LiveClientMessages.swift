import Bus
import Foundation
import HummingbirdWebSocket
import RideModels
import Wire

/// What a client sends on `/v1/me/live`: a rider's `{"watch_nearby":…}` (`NearbyWatch`) and a
/// driver's `{"batch":{batch_id, locations, device?, device_credential}}` — the tracking SDK's
/// batch, forwarded to tracking under the session's device credential and answered
/// `{"type":"ack","batch_id","ack"}` or `{"type":"error","batch_id","status","error"}`, in order.
/// Each kind has its own budget per connection; over it, an error (429) and the connection is
/// closed with 4429. Anything else is ignored (and counted with the watches).
enum LiveClientMessages {
    /// The largest client message read: a batch of a few hundred fixes.
    static let maxMessage = 65_536
    /// Watches (each asks orders at once): 30 at once, then one every 2 s.
    static let watches = RateLimit(perMinute: 30)
    /// Batches: a phone sends one a second or less; 240 at once, then four a second.
    static let batches = RateLimit(perMinute: 240)

    enum Kind: Equatable {
        case nearby(NearbyWatch.Ask)
        /// A batch's members as the client sent them.
        case batch([String: JSONValue])
        /// `batch` that is not an object: a 422 with this message.
        case invalidBatch(String)
    }

    static func kind(of text: String, caller: JSONValue) -> Kind {
        let message = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
        guard let batch = message?["batch"] else { return .nearby(NearbyWatch.ask(message, caller: caller)) }
        guard let members = batch.objectValue else {
            return .invalidBatch("batch: expected an object {batch_id, locations, device?, device_credential}")
        }
        return .batch(members)
    }

    /// Reads the client's messages until it closes: at most one nearby watch at a time, batches
    /// one after another.
    static func receive(
        _ inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, user: User, platform: PlatformCalls, devices: DeviceBatches
    ) async throws {
        let caller = try JSONValue(encoding: Caller(user))
        var watching: Task<Void, Never>?
        defer { watching?.cancel() }
        var budget = RateLimiter<Int>(capacity: 2)
        for try await message in inbound.messages(maxSize: maxMessage) {
            let kind: Kind = if case .text(let text) = message { Self.kind(of: text, caller: caller) } else { .nearby(.other) }
            let (key, limit) = if case .nearby = kind { (0, watches) } else { (1, batches) }
            if let refusal = budget.take([(key: key, limit: limit)], at: .now) {
                let why =
                    "more than \(limit) \(key == 0 ? "messages" : "batches") on this connection; connect again in \(refusal.retryAfterSeconds) s"
                try await send(.error(status: 429, code: "too_many_messages", message: why), outbound)
                try await outbound.close(.unknown(4429), reason: "too_many_messages")
                return
            }
            switch kind {
            case .nearby(.other): continue
            case .nearby(.stop):
                watching?.cancel()
                watching = nil
            case .nearby(.invalid(let why)):
                try await send(.error(status: Status.unprocessable, code: "invalid_params", message: why), outbound)
            case .nearby(.watch(let params)):
                watching?.cancel()
                watching = Task { await NearbyWatch.watch(params, outbound: outbound, platform: platform) }
            case .invalidBatch(let why):
                try await send(.error(status: Status.unprocessable, code: "invalid_params", message: why), outbound)
            case .batch(let body): try await send(await answer(body, from: user, devices: devices), outbound)
            }
        }
    }

    /// Tracking's answer to one batch, as a message naming the batch.
    static func answer(_ body: [String: JSONValue], from user: User, devices: DeviceBatches) async -> LiveMessage {
        let batchID = body["batch_id"]
        do {
            // Without the credential tracking would take the gateway's word: the socket's batches are the phone's.
            guard body["device_credential"] != nil else {
                throw GatewayError(
                    .unauthorized, "credential_required",
                    "device_credential: required in a batch on the live socket (the session's device_credential)")
            }
            let reply = try await devices.forward(try await devices.batch(body, from: user))
            guard reply.isSuccess else {
                let refusal = (try? JSONCoding.decode(ErrorBody.self, from: reply.json))?.error
                return .error(
                    LiveError(
                        status: reply.status, error: refusal ?? ErrorBody(code: "error", message: "refused").error, batchID: batchID))
            }
            return .ack(LiveAck(batchID: batchID, ack: try JSONCoding.decode(IngestAck.self, from: reply.json)))
        } catch let error as GatewayError {
            return .error(status: error.status.code, code: error.code, message: error.message, batchID: batchID)
        } catch {
            return .error(
                status: 503, code: "unavailable", message: "the batch could not reach tracking now; send it again", batchID: batchID)
        }
    }

    static func send(_ message: LiveMessage, _ outbound: WebSocketOutboundWriter) async throws {
        try await LiveRoute.send(message, outbound)
    }
}
