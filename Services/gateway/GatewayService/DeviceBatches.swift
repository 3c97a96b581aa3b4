import Bus
import Foundation
import RideContract
import RideModels
import Wire

/// What a driver's phone says about its device — fixes, availability — made into a batch of
/// tracking's `ingest` op, as the tracking SDK would send it: the device is the driver's own, the
/// `user_id` dispatch looks for is vouched for by the gateway, going online needs approval. For
/// `POST /v1/devices/{id}/locations`, `PUT /v1/me/availability` and batches sent over `/v1/me/live`
/// (where the batch carries the session's device credential, which tracking checks as the
/// ingest socket does).
struct DeviceBatches: Sendable {
    let platform: PlatformCalls
    /// The publishable key the gateway's batches carry (`--publishable-key`).
    let publishableKey: String

    /// The driver's device id: 403 for a rider, 409 for a driver without one.
    static func device(of user: User) throws -> String {
        guard user.role == .driver else { throw GatewayError(.forbidden, "drivers_only", "only drivers report locations and availability") }
        guard let deviceID = user.deviceID else {
            throw GatewayError(.conflict, "no_device", "this driver has no device_id; set one with PATCH /v1/me")
        }
        return deviceID
    }

    /// `body` — a batch without `device_id` and `publishable_key` — as `user`'s device sends it.
    /// Metadata the app sends replaces the device's (as the SDK's does) with the driver's
    /// `user_id` in it; without metadata the device's stays as it is.
    func batch(_ body: [String: JSONValue], from user: User) async throws -> [String: JSONValue] {
        var body = body
        body["device_id"] = .string(try Self.device(of: user))
        body["publishable_key"] = .string(publishableKey)
        if let device = body["device"], device.objectValue == nil {
            throw GatewayError(.unprocessableContent, "invalid_params", "device: expected an object")
        }
        if body["device"]?["available"] == .bool(true) { try await requireApproval(user.id) }
        if var intents = body["device"]?.objectValue, let sent = intents["metadata"] {
            guard var metadata = sent.objectValue else {
                throw GatewayError(.unprocessableContent, "invalid_params", "device.metadata: expected an object")
            }
            metadata["user_id"] = .string(user.id)
            intents["metadata"] = .object(metadata)
            body["device"] = .object(intents)
        }
        return body
    }

    /// Tracking's answer to `batch`; a refused publishable key is the gateway's misconfiguration.
    func forward(_ batch: [String: JSONValue]) async throws -> ServiceReply {
        let reply = try await platform.reply(Ops.Tracking.ingest, body: .object(batch))
        if reply.status == Status.unauthorized,
            (try? JSONCoding.decode(JSONValue.self, from: reply.json))?["error"]?["code"] == "invalid_publishable_key"
        {
            throw GatewayError(
                .internalServerError, "misconfigured",
                "tracking refuses the gateway's publishable key (--publishable-key, RIDE_PUBLISHABLE_KEY)")
        }
        return reply
    }

    /// A driver goes online only approved, with no document expired — read from users, the
    /// approval's owner, at the moment of asking (not from the token cache): `403 not_approved`
    /// saying what is missing.
    func requireApproval(_ userID: String) async throws {
        let user = try await platform.call(Ops.Users.get, UserIDParams(id: userID))
        if let problem = DriverApproval.problem(user, today: DriverApproval.day(Date())) {
            throw GatewayError(.forbidden, "not_approved", "not approved for shifts: \(problem)")
        }
    }
}
