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
    static let takesEmptyObject: Set<String> = [
        "orders.stats", "orders.reports", "notifications.list_webhooks", "notifications.dead_letters", "users.search",
    ]

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
                    for body in Self.bodies
                    where !(Self.takesEmptyObject.contains("\(service.name).\(op)") && body.hasPrefix("{") && body != "{nope") {
                        let reply = try await service.call(op, body)
                        let message = reply.body["error"]?["message"]?.stringValue ?? ""
                        #expect((400..<500).contains(reply.status), "\(service.name).\(op) \(body) → \(reply.status) \(reply.body)")
                        #expect(
                            !message.isEmpty && reply.body["error"]?["code"]?.stringValue?.isEmpty == false,
                            "\(service.name).\(op) \(body): \(reply.body)")
                    }
                }
                let wrongType = try await service.call("events", #"{"after":"x"}"#)
                #expect(
                    wrongType.status == 422 && wrongType.body["error"]?["message"]?.stringValue?.hasPrefix("after:") == true,
                    "\(wrongType.body)")
                let after = try await service.call("events", #"{"after":0}"#).body["last_sequence"]
                #expect(after == before, "\(service.name) stored an event for bad input")
            }
        }
    }

    /// A plausible body for any op (every usual field, right types), which the fuzzer mutates.
    static let plausible =
        #"{"caller":{"role":"rider","id":"r-0000000000000001"},"id":"o-0000000000000001","user_id":"r-0000000000000001","text":"hi","stars":3,"after":0,"limit":5,"days":2,"label":"home","name":"Home","place":{"latitude":47.8,"longitude":35.1},"pickup":{"latitude":47.8,"longitude":35.1},"dropoff":{"latitude":47.81,"longitude":35.12},"token":"x.y","phone_number":"+380501112233","password":"secret123","role":"rider","trip_id":"t-1","share_id":"abcdefg","url":"http://127.0.0.1:9/hook","secret":"s","device_id":"d-1","destination":{"geometry":{"type":"Point","coordinates":[35.1,47.8]},"radius":50}}"#

    /// Fuzzing every op of every stateful service with mutations of a plausible body (seeded, so a
    /// failure replays): never a 5xx, always an error that names something, and each service still
    /// answers afterwards.
    @Test func everyOpSurvivesMutatedBodiesWithoutAServerError() async throws {
        try await withTestBus("fuzz-ops") { bus in
            let users = try await TestService.users(on: bus)
            _ = try await TestTracking.start(on: bus)
            let trips = try await TestService.trips(on: bus)
            let orders = try await TestService.orders(on: bus)
            let notifications = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            var random = FuzzGenerator(state: 2026_11_21)
            var replies = 0
            for service in [users, orders, trips, notifications] {
                for op in try await ops(of: service) {
                    for round in 0..<25 {
                        var body = Array(Self.plausible.utf8)
                        for _ in 0..<Int.random(in: 1...3, using: &random) { body = FuzzGenerator.mutate(body, &random) }
                        let text = String(decoding: body, as: UTF8.self)
                        let reply = try await service.call(op, text)
                        replies += 1
                        #expect(reply.status < 500, "\(service.name).\(op) round \(round): \(text) → \(reply.status) \(reply.body)")
                        if reply.status >= 400 {
                            #expect(reply.body["error"]?["message"]?.stringValue?.isEmpty == false, "\(service.name).\(op): \(reply.body)")
                        }
                    }
                }
                #expect(try await service.call("ping", "{}").status == 200, "\(service.name) still answers")
            }
            #expect(replies > 800)
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
