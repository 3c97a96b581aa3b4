import Bus
import Foundation
import RideModels
import Testing

/// Bad input on every op of users, orders, trips and notifications: a 4xx naming what is wrong, and nothing
/// stored changes. The ops come from each service's own "unknown op" answer, so an op added
/// later is covered without touching this test.
@Suite(.serialized) struct BadInputIntegrationTests {
    /// Bodies no op accepts: not JSON, not an object, no fields, every usual field of the wrong type.
    static let bodies = [
        "{nope", "[1]", "{}", "null",
        #"{"id":5,"caller":{"role":"pilot","id":7},"after":"x","limit":"x","role":3,"phone_number":1,"password":2,"token":2,"device_id":3,"trip_id":4,"share_id":5,"destination":7,"pickup":"x"}"#,
    ]

    /// Ops whose fields are all optional: `{}` and unknown fields are fine for them.
    static let takesEmptyObject: Set<String> = ["orders.stats", "notifications.list_webhooks", "notifications.dead_letters"]

    @Test func everyOpOfTheStatefulServicesAnswersBadInputWithA4xxAndStoresNothing() async throws {
        try await withTestBus("bad-input") { bus in
            let users = try await TestService.users(on: bus)
            let tracking = try await TestTracking.start(on: bus)
            let trips = try await TestService.trips(on: bus)
            let orders = try await TestService.orders(on: bus)
            let notifications = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            _ = tracking
            for service in [users, orders, trips, notifications] {
                let before = try await service.call("events", #"{"after":0}"#).body["last_sequence"]
                let ops = try await ops(of: service)
                #expect(ops.count >= 5, "\(service.name): \(ops)")
                for op in ops {
                    for body in Self.bodies where !(Self.takesEmptyObject.contains("\(service.name).\(op)") && body.hasPrefix("{") && body != "{nope") {
                        let reply = try await service.call(op, body)
                        let message = reply.body["error"]?["message"]?.stringValue ?? ""
                        #expect((400..<500).contains(reply.status), "\(service.name).\(op) \(body) → \(reply.status) \(reply.body)")
                        #expect(!message.isEmpty && reply.body["error"]?["code"]?.stringValue?.isEmpty == false,
                                "\(service.name).\(op) \(body): \(reply.body)")
                    }
                }
                let wrongType = try await service.call("events", #"{"after":"x"}"#)
                #expect(wrongType.status == 422 && wrongType.body["error"]?["message"]?.stringValue?.hasPrefix("after:") == true, "\(wrongType.body)")
                let after = try await service.call("events", #"{"after":0}"#).body["last_sequence"]
                #expect(after == before, "\(service.name) stored an event for bad input")
            }
        }
    }

    /// The service's ops, as listed by its answer to an op it does not have.
    func ops(of service: TestService) async throws -> [String] {
        let reply = try await service.call("no_such_op", "{}")
        #expect(reply.status == 404)
        guard let message = reply.body["error"]?["message"]?.stringValue, let list = message.components(separatedBy: "ops: ").last else {
            throw TestFailure("no op list in \(reply.body)")
        }
        return list.components(separatedBy: ", ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && $0 != "ping" }
    }
}
