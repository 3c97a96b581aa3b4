import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceLifecycle

/// Ends what tracking keeps of a suspended account at once (`user.suspended`), not at the next
/// credential check: the driver's device goes off duty (out of Nearby and dispatch) and the
/// credential's acceptance is forgotten, so the phone's next batch is refused. A driver whose
/// approval lapsed (`user.approval_lapsed`: a document expired, or an operator withdrew it) has
/// their device taken off duty too, and the acceptance forgotten as well: the credential still
/// holds (they may log in and stream), but a batch asking to go online is asked about again, and
/// users says why it may not.
struct SuspensionListener: Service {
    let subscriber: EventSubscriber<UserSuspended>
    let lapses: EventSubscriber<DriverApprovalLapsed>
    let credentials: DeviceCredentialCheck?
    let state: TrackingState
    let writer: StoreWriter
    let ownership: ShardOwnership
    let logger: Logger

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await subscriber.eachEvent { received in await suspended(received.event.data) } }
            group.addTask {
                await lapses.eachEvent { received in
                    credentials?.forget(userID: received.event.data.userID)
                    await offDuty(
                        received.event.data.deviceID, userID: received.event.data.userID,
                        because: "approval lapsed: \(received.event.data.reason)")
                }
            }
        }
    }

    func suspended(_ account: UserSuspended) async {
        credentials?.forget(userID: account.userID)
        await offDuty(account.deviceID, userID: account.userID, because: "suspended")
    }

    func offDuty(_ deviceID: String?, userID: String, because why: String) async {
        guard let deviceID, ownership.owns(deviceID), let change = state.setAvailability(deviceID: deviceID, available: false, now: Date())
        else { return }
        do {
            if !change.events.isEmpty { try await writer.write([TrackingWrite(record: change.record)], events: change.events) }
            logger.notice("a driver's device is off duty", metadata: ["device_id": "\(deviceID)", "user_id": "\(userID)", "why": "\(why)"])
        } catch {
            logger.warning("a driver's device could not be stored off duty", metadata: ["device_id": "\(deviceID)", "error": "\(error)"])
        }
    }
}
