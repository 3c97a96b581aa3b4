import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceLifecycle

/// Ends what tracking keeps of a suspended account at once (`user.suspended`), not at the next
/// credential check: the driver's device goes off duty (out of Nearby and dispatch) and the
/// credential's acceptance is forgotten, so the phone's next batch is refused.
struct SuspensionListener: Service {
    let subscriber: EventSubscriber<UserSuspended>
    let credentials: DeviceCredentialCheck?
    let state: TrackingState
    let writer: StoreWriter
    let shard: DeviceShard
    let logger: Logger

    func run() async throws {
        await subscriber.eachEvent { received in await suspended(received.event.data) }
    }

    func suspended(_ account: UserSuspended) async {
        credentials?.forget(userID: account.userID)
        guard let deviceID = account.deviceID, shard.owns(deviceID),
            let change = state.setAvailability(deviceID: deviceID, available: false, now: Date())
        else { return }
        do {
            if !change.events.isEmpty { try await writer.write([TrackingWrite(record: change.record)], events: change.events) }
            logger.notice("a suspended driver's device is off duty", metadata: ["device_id": "\(deviceID)", "user_id": "\(account.userID)"])
        } catch {
            logger.warning("a suspended driver's device could not be stored off duty", metadata: ["device_id": "\(deviceID)", "error": "\(error)"])
        }
    }
}
