import Bus
import Foundation
import GRDB
import OrdersService
import RideContract
import RideModels
import ServiceStorage
import Storage
import Testing

/// An event appended by its kind gets the kind's topic and type; a key the kind does not take, or
/// a missing one it needs, is refused before anything is stored.
struct OutboxEventKindTests {
    @Test func anEventAppendedByItsKindHasTheKindsTopicAndTypeAndAWrongKeyStoresNothing() throws {
        let file = TemporaryFile()
        let pool = try ServiceDatabase.open(
            path: file.path, migrations: [("v1", "CREATE TABLE t (x INTEGER);"), ("v2", Outbox.traceColumnsSQL)], outbox: true)
        let command = DeviceCommandEvent(command: .startTracking)
        try pool.write { db in
            try Outbox.append(db, Events.deviceCommand, key: "phone-1", data: command)
            #expect(throws: ServiceError.self, "device.command needs the device") {
                try Outbox.append(db, Events.deviceCommand, data: command)
            }
            #expect(throws: ServiceError.self, "user.suspended takes no key") {
                try Outbox.append(
                    db, Events.userSuspended, key: "x",
                    data: UserSuspended(userID: "u1", role: .rider, deviceID: nil, reason: "test", suspendedAt: Date()))
            }
        }
        #expect(throws: ServiceError.self, "an order's side event checks its key the same way") {
            try OrderSideEvent(Events.deviceCommand, data: command).topic()
        }
        #expect(try OrderSideEvent(Events.deviceCommand, key: "phone-1", data: command).topic() == "device.command.phone-1")
        let rows = try pool.read { db in try Outbox.events(db, after: 0, limit: 10) }
        #expect(rows.map(\.topic) == ["device.command.phone-1"])
        #expect(rows.map(\.type) == ["device.command"])
    }
}
