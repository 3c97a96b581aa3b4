import Bus
import Foundation
import RideModels
import Testing
import TrackingService
import Wire

/// A `user_id` a batch gives its device is checked only when it is new to the device, and
/// believed only when that user's account names the device.
@Suite struct DeviceOwnershipTests {
    struct Accounts: DeviceOwnerLookup {
        var devices: [String: String?]
        var down = false
        func device(ofUser userID: String) async throws -> String? {
            if down { throw MDPClientError.timeout(service: "users", attempts: 3, milliseconds: 7500) }
            guard let device = devices[userID] else { throw ServiceError.notFound("not_found", "no user \(userID)") }
            return device
        }
    }

    let accounts = Accounts(devices: ["dan": "dan-phone", "eve": "eve-phone", "rider": nil])

    func intents(_ userID: JSONValue?) -> DeviceIntents {
        DeviceIntents(metadata: userID.map { ["user_id": $0, "car": "Prius"] } ?? ["car": "Prius"])
    }

    @Test func onlyANewUserIDIsAClaim() {
        var dans = DeviceRecord(id: "dan-phone")
        dans.metadata = ["user_id": "dan"]
        #expect(DeviceOwnership.claim(intents("dan"), current: nil) == "dan", "a device seen for the first time")
        #expect(DeviceOwnership.claim(intents("dan"), current: dans) == nil, "the one it has")
        #expect(DeviceOwnership.claim(intents("eve"), current: dans) == "eve")
        #expect(DeviceOwnership.claim(intents(nil), current: dans) == nil, "metadata without a user id")
        #expect(DeviceOwnership.claim(intents(7), current: nil) == nil, "not a string: no claim of an account")
        #expect(DeviceOwnership.claim(nil, current: dans) == nil, "no intents")
    }

    @Test func aClaimIsBelievedOnlyFromTheAccountThatNamesTheDevice() async {
        #expect(await DeviceOwnership.problem(deviceID: "dan-phone", userID: "dan", owners: accounts) == nil)
        let taken = await DeviceOwnership.problem(deviceID: "dan-phone", userID: "eve", owners: accounts)
        #expect(taken?.status == 409 && taken?.code == "device_in_use", "\(String(describing: taken))")
        #expect(taken?.message.contains("names device eve-phone") == true)
        #expect(
            await DeviceOwnership.problem(deviceID: "dan-phone", userID: "rider", owners: accounts)?.code == "device_in_use",
            "an account without a device")
        #expect(await DeviceOwnership.problem(deviceID: "dan-phone", userID: "nobody", owners: accounts)?.code == "unknown_user")
        var down = accounts
        down.down = true
        let unknown = await DeviceOwnership.problem(deviceID: "dan-phone", userID: "dan", owners: down)
        #expect(unknown?.status == 503 && unknown?.code == "owner_unavailable", "users not answering: refused, to be sent again")
    }
}
