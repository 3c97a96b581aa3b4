import Bus
import Foundation
import PlatformLauncher
import RideModels
import ServiceKit
import Storage
import Synchronization
import Testing
import Wire

/// Fix times that only go forward: from `start`, a second apart, never before `notBefore`.
final class FixClock: Sendable {
    private let next: Mutex<Date>

    init(start: Date) { next = Mutex(start) }

    func stamps(_ count: Int, notBefore: Date? = nil) -> [Date] {
        next.withLock { next in
            if let notBefore, notBefore > next { next = notBefore }
            let first = next
            next = first.addingTimeInterval(Double(count))
            return (0..<count).map { first.addingTimeInterval(Double($0)) }
        }
    }
}

/// `ride-orders` with the real `ride-users` and `ride-tracking` it asks, through the real bus.
@Suite(.serialized) struct OrdersIntegrationTests {
    struct Platform {
        let bus: TestBus
        let users: TestService
        let tracking: TestTracking
        /// Tracking's other shards (`trackingShards`), `tracking-1` on.
        var trackingShards: [TestTracking] = []
        let trips: TestService
        let orders: TestService
        var riderID = ""
        var driverIDs: [String] = []
        /// Times for Dan's fixes: tracking publishes only a device's newer locations, so every drive
        /// continues where the last one stopped.
        let clock = FixClock(start: Date().addingTimeInterval(-500))

        /// Ann (a rider) and two drivers, Dan and Eve, whose phones report as available near the pickup.
        /// - Parameter database: a PostgreSQL URL for the services to keep their state in (else SQLite files).
        /// - Parameter trackingShards: tracking as this many shards, `tracking` (shard 0) and `tracking-K`.
        static func start(
            _ bus: TestBus, database: PostgresURL? = nil, orders ordersArguments: [String] = [], trackingShards: Int = 1,
            subscribeBefore: (() async throws -> Void)? = nil
        ) async throws -> Platform {
            let onPostgres = database.map { ["--database-url", $0.urlString] } ?? []
            let users = try await TestService.users(on: bus, arguments: onPostgres)
            let split = trackingShards > 1 ? DeviceShards(count: trackingShards) : nil
            let tracking = try await TestTracking.start(
                on: bus, shard: split.map { DeviceShard(index: 0, of: $0) }, deviceCredentials: true, arguments: onPostgres)
            var shards: [TestTracking] = []
            for index in 1..<max(1, trackingShards) {
                shards.append(
                    try await TestTracking.start(
                        on: bus, name: "tracking-\(index)", shard: split.map { DeviceShard(index: index, of: $0) }, deviceCredentials: true,
                        arguments: onPostgres))
            }
            let trips = try await TestService.trips(on: bus, arguments: onPostgres)
            try await subscribeBefore?()
            var platform = Platform(
                bus: bus, users: users, tracking: tracking, trackingShards: shards, trips: trips,
                orders: try await TestService.orders(on: bus, arguments: onPostgres + ordersArguments))
            platform.riderID = try await platform.register(
                #"{"role":"rider","name":"Ann","phone_number":"+380501234567","password":"secret123"}"#)
            for (name, phone, offset) in [("Dan", "+380671234567", 0.002), ("Eve", "+380671234568", 0.004)] {
                let device = "\(name.lowercased())-phone"
                let id = try await platform.register(
                    #"{"role":"driver","name":"\#(name)","phone_number":"\#(phone)","password":"driving9","device_id":"\#(device)","car":{"model":"Prius","license_plate":"AB 1234"}}"#
                )
                platform.driverIDs.append(id)
                let batch = IngestBatch(
                    publishableKey: TestTracking.publishableKey, deviceID: device, batchID: 1,
                    device: DeviceIntents(
                        name: name, metadata: ["user_id": .string(id)], tracking: true, available: true, changedAt: Date()),
                    // Stamped 10 minutes ago: later test drives may be stamped in the recent past and
                    // still be newer (tracking publishes only a device's newer locations).
                    locations: [
                        DeviceLocation(
                            latitude: 47.8359 + offset, longitude: 35.1146, recordedAt: Date().addingTimeInterval(-600), accuracy: 5)
                    ])
                _ = try await tracking.call("ingest", batch, as: IngestAck.self)
            }
            return platform
        }

        func register(_ json: String) async throws -> String {
            let reply = try await users.call("register", json)
            guard reply.status == 201, case .string(let id)? = reply.body["id"] else { throw TestFailure("register: \(reply)") }
            return id
        }

        func call(_ op: String, as caller: (String, String), _ fields: String = "") async throws -> (status: Int, body: JSONValue) {
            try await orders.call(op, #"{"caller":{"role":"\#(caller.0)","id":"\#(caller.1)"}\#(fields.isEmpty ? "" : ",")\#(fields)}"#)
        }

        var ann: (String, String) { ("rider", riderID) }
        var dan: (String, String) { ("driver", driverIDs[0]) }
        var eve: (String, String) { ("driver", driverIDs[1]) }
    }

    static let trip =
        #""pickup":{"latitude":47.8359,"longitude":35.1146,"address":"Sobornyi Ave 1"},"dropoff":{"latitude":47.8501,"longitude":35.1302}"#

    /// An offer nobody took expires; once every available driver near has been asked, the order is
    /// offered again to the ones who did not decline — not left offered to no one.
    @Test func anOrderEveryDriverWasAskedIsOfferedAgainToThoseWhoDidNotDecline() async throws {
        try await withTestBus("orders-reoffer") { bus in
            let platform = try await Platform.start(bus, orders: ["--offer-timeout-s", "1"])
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("no id: \(created)") }
            #expect(try await platform.call("decline", as: platform.dan, #""id":"\#(id)""#).status == 200)
            // Eve lets her offer expire, round after round (one a second).
            try await eventually("a few rounds went by", timeout: .seconds(15)) {
                (try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["dispatch_round"]?.numberValue ?? 0) >= 4
            }
            let order = try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body
            #expect(
                order["offered_to"] == .array([.string(platform.driverIDs[1])]),
                "Eve again, who did not decline; not Dan, who did: \(order)")
            #expect(try await platform.call("list", as: platform.eve).body["orders"]?[0]?["id"] == .string(id), "Eve's app shows the offer")
            #expect(try await platform.call("accept", as: platform.eve, #""id":"\#(id)""#).status == 200)
        }
    }

    /// A driver looking for orders near them sees exactly the orders they may accept: those
    /// offered to them (dispatch offers the nearest first), not every NEW order around.
    @Test func theOrdersNearADriverAreTheOnesOfferedToThem() async throws {
        try await withTestBus("orders-near") { bus in
            let platform = try await Platform.start(bus, orders: ["--dispatch-drivers", "1", "--offer-timeout-s", "60"])
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            #expect(created.body["offered_to"] == .array([.string(platform.driverIDs[0])]), "Dan, the nearest: \(created.body)")
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("no id") }
            let near = #""status":"NEW","near":{"latitude":47.836,"longitude":35.1146,"radius":1000}"#
            #expect(
                try await platform.call("list", as: platform.dan, near).body["orders"]?.arrayValue?.compactMap { $0["id"] } == [.string(id)]
            )
            #expect(try await platform.call("list", as: platform.eve, near).body["orders"] == .array([]), "not offered to Eve")
            let refused = try await platform.call("accept", as: platform.eve, #""id":"\#(id)""#)
            #expect(refused.status == 403, "what the list does not show cannot be accepted: \(refused.body)")
            #expect(try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["status"] == "NEW", "and nothing changed")
        }
    }

    /// An order nobody accepts does not wait forever: after `--driver-search-s` it ends CANCELLED,
    /// reason `no_driver_found`, counted in /metrics and in `orders.stats` (what `ridectl status` shows).
    @Test func anOrderNobodyAcceptsEndsWithNoDriverFound() async throws {
        try await withTestBus("orders-no-driver") { bus in
            let platform = try await Platform.start(bus, orders: ["--driver-search-s", "3", "--offer-timeout-s", "1"])
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            guard created.status == 201, case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            try await eventually("the order ends", timeout: .seconds(15)) {
                try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["status"] == "CANCELLED"
            }
            let order = try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body
            #expect(order["cancel_reason"] == .string(Order.noDriverFound) && order["offered_to"] == .array([]), "\(order)")
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(id)""#).status == 409, "too late to accept")
            let stats = try await platform.call("stats", as: platform.ann, "").body
            #expect(stats["no_driver_found"] == 1 && stats["by_status"]?["CANCELLED"] == 1, "\(stats)")
            let metrics = try await HTTPProbe.get("http://127.0.0.1:\(platform.orders.httpPort)/metrics").text
            #expect(
                metrics.contains("ride_orders_no_driver_found_total 1"),
                "\(metrics.split(separator: "\n").filter { $0.contains("no_driver") })")
            // The rider books again: a new order, searched for anew.
            #expect(try await platform.call("create", as: platform.ann, Self.trip).status == 201)
        }
    }

    /// A driver's cancel before the ride does not end the rider's ride: the order goes back to
    /// dispatch, offered to the other drivers and never again to the one who cancelled; the next
    /// driver gets a trip of their own; the search for a driver starts over; the cancel counts on
    /// the driver's record.
    @Test func aDriversCancelSendsTheOrderBackToDispatch() async throws {
        try await withTestBus("orders-driver-cancel") { bus in
            let platform = try await Platform.start(bus)
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            guard created.status == 201, case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            let order = #""id":"\#(id)""#
            #expect(try await platform.call("accept", as: platform.dan, order).status == 200)
            try await eventually("Dan's pickup trip is made", timeout: .seconds(15)) {
                try await platform.call("get", as: platform.ann, order).body["status"] == "PICKING_UP"
            }
            let firstTrip = try await platform.call("get", as: platform.ann, order).body["trip_id"]
            // Ann and Dan talk; Dan sees Ann's number while he drives to her.
            #expect(try await platform.call("send_message", as: platform.ann, order + #","text":"I am at the gate""#).status == 201)
            #expect(try await platform.call("send_message", as: platform.dan, order + #","text":"2 minutes""#).status == 201)
            #expect(try await platform.call("get", as: platform.dan, order).body["rider"]?["phone_number"]?.stringValue?.isEmpty == false)
            let cancelled = try await platform.call("cancel", as: platform.dan, order + #","reason":"flat tyre""#)
            #expect(cancelled.status == 200, "\(cancelled.body)")
            #expect(cancelled.body["status"] == "NEW" && cancelled.body["driver"] == nil, "\(cancelled.body)")
            #expect(cancelled.body["offered_to"] == .array([.string(platform.driverIDs[1])]), "Eve, not Dan: \(cancelled.body)")
            #expect(cancelled.body["redispatches"] == 1 && cancelled.body["declined_by"] == .array([.string(platform.driverIDs[0])]))
            try await eventually("the first trip is let go", timeout: .seconds(15)) {
                try await platform.call("get", as: platform.ann, order).body["trip_id"] == nil
            }
            let refused = try await platform.call("accept", as: platform.dan, order)
            #expect(refused.status == 403, "never again to the driver who cancelled: \(refused.body)")
            // Eve, merely offered the order, sees neither Ann's number nor the addresses (issue 38).
            let offered = try await platform.call("get", as: platform.eve, order).body
            #expect(
                offered["rider"]?["phone_number"] == "" && offered["pickup"]?["address"] == nil && offered["dropoff"]?["address"] == nil,
                "\(offered)")
            #expect(try await platform.call("accept", as: platform.eve, order).status == 200)
            // Eve reads none of the chat Ann had with Dan; Ann reads all of hers.
            let evesChat = try await platform.call("messages", as: platform.eve, order).body["messages"]?.arrayValue ?? []
            #expect(evesChat.isEmpty, "the next driver does not read the last one's chat: \(evesChat)")
            #expect(try await platform.call("messages", as: platform.ann, order).body["messages"]?.arrayValue?.count == 2)
            #expect(
                try await platform.call("get", as: platform.eve, order).body["rider"]?["phone_number"]?.stringValue?.isEmpty == false,
                "Eve, assigned, may call Ann")
            try await eventually("Eve's own pickup trip", timeout: .seconds(15)) {
                let now = try await platform.call("get", as: platform.ann, order).body
                return now["status"] == "PICKING_UP" && now["trip_id"] != nil && now["trip_id"] != firstTrip
            }
            let trips = LifecycleIntegrationTests.values(try await platform.trips.call("events", #"{"after":0}"#).body)
            #expect(trips.filter { $0 == "created" }.count == 2 && trips.contains("completed"), "two trips, the first completed: \(trips)")
            // The cancel is on Dan's record (users counts order.driver_cancelled), not on Eve's.
            try await eventually("Dan's record counts the cancel", timeout: .seconds(15)) {
                try await platform.users.call("get", #"{"id":"\#(platform.driverIDs[0])"}"#).body["cancellations"] == 1
            }
            #expect(try await platform.users.call("get", #"{"id":"\#(platform.driverIDs[1])"}"#).body["cancellations"] == nil)
            // The rider's cancel still ends the order; after it, neither reads the other's number.
            #expect(try await platform.call("cancel", as: platform.ann, order).body["status"] == "CANCELLED")
            #expect(try await platform.call("get", as: platform.eve, order).body["rider"]?["phone_number"] == "")
            let ended = try await platform.call("get", as: platform.ann, order).body
            #expect(
                ended["driver"]?["phone_number"] == "" && ended["driver"]?["device_id"] == nil && ended["driver"]?["name"] != nil,
                "\(ended)")
        }
    }

    /// The driver's inbox: the kinds of their notifications about `orderID`.
    static func inbox(_ notifications: TestService, of userID: String, about orderID: String) async throws -> [String] {
        let inbox = try await notifications.call("list", #"{"user_id":"\#(userID)"}"#).body["notifications"]?.arrayValue ?? []
        return inbox.filter { $0["order_id"] == .string(orderID) }.compactMap { $0["kind"]?.stringValue }
    }

    /// Offers go stale (issue 22, item 4): Dan, offered orders A and B, accepts B; A drops him
    /// (he stays in its history, not among those who declined), goes at once to Eve, the next
    /// nearest, and Dan's app is told (`offer_withdrawn`), from the same outbox as A's change.
    @Test func aDriverWhoAcceptsAnotherRideLosesTheirOtherOffers() async throws {
        try await withTestBus("orders-withdraw-accepted") { bus in
            let platform = try await Platform.start(bus, orders: ["--dispatch-drivers", "1", "--offer-timeout-s", "60"])
            let notifications = try await TestService.start(
                on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let bob = try await platform.register(#"{"role":"rider","name":"Bob","phone_number":"+380501234569","password":"secret123"}"#)
            let (dan, eve) = (platform.driverIDs[0], platform.driverIDs[1])
            let createdA = try await platform.call("create", as: platform.ann, Self.trip)
            let createdB = try await platform.call("create", as: ("rider", bob), Self.trip)
            guard case .string(let a)? = createdA.body["id"], case .string(let b)? = createdB.body["id"] else {
                throw TestFailure("create: \(createdA) \(createdB)")
            }
            #expect(
                createdA.body["offered_to"] == .array([.string(dan)]) && createdB.body["offered_to"] == .array([.string(dan)]),
                "both to Dan, the nearest")
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(b)""#).status == 200)
            try await eventually("A leaves Dan for Eve") {
                try await platform.call("get", as: platform.ann, #""id":"\#(a)""#).body["offered_to"] == .array([.string(eve)])
            }
            let orderA = try await platform.call("get", as: platform.ann, #""id":"\#(a)""#).body
            #expect(
                orderA["status"] == "NEW" && orderA["offer_history"] == .array([.string(dan), .string(eve)])
                    && orderA["declined_by"] == .array([]), "\(orderA)")
            let dansOrders = try await platform.call("list", as: platform.dan).body["orders"]?.arrayValue?.compactMap { $0["id"] }
            #expect(dansOrders == [.string(b)], "Dan's app lists only the ride he took")
            let events = try await platform.orders.call("events", #"{"after":0}"#).body["events"]?.arrayValue ?? []
            let withdrawn = events.filter { $0["type"] == "order.offer_withdrawn" }.compactMap { $0["data"] }
            #expect(
                withdrawn.count == 1 && withdrawn.first?["driver_id"] == .string(dan) && withdrawn.first?["reason"] == "accepted_other",
                "\(withdrawn)")
            try await eventually("Dan is told, Eve offered") {
                let told = try await Self.inbox(notifications, of: dan, about: a).contains("offer_withdrawn")
                let offered = try await Self.inbox(notifications, of: eve, about: a).contains("new_offer")
                return told && offered
            }
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(a)""#).status == 409, "Dan is on a ride")
            #expect(try await platform.call("accept", as: platform.eve, #""id":"\#(a)""#).status == 200)
        }
    }

    /// A driver who goes offline loses their offers, which go on to the next driver; a device that
    /// merely claims to be a driver's (its metadata names Eve, but her account names another
    /// phone) going offline withdraws nothing of hers.
    @Test func aDriverWhoGoesOfflineLosesTheirOffer() async throws {
        try await withTestBus("orders-withdraw-offline") { bus in
            let platform = try await Platform.start(bus, orders: ["--dispatch-drivers", "1", "--offer-timeout-s", "60"])
            let notifications = try await TestService.start(
                on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let (dan, eve) = (platform.driverIDs[0], platform.driverIDs[1])
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            #expect(created.body["offered_to"] == .array([.string(dan)]))
            _ = try await platform.tracking.call(
                "set_availability", SetAvailabilityParams(deviceID: "dan-phone", available: false), as: DeviceInfo.self)
            try await eventually("the order leaves Dan for Eve") {
                try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["offered_to"] == .array([.string(eve)])
            }
            try await eventually("Dan is told") { try await Self.inbox(notifications, of: dan, about: id).contains("offer_withdrawn") }

            let impostor = IngestBatch(
                publishableKey: TestTracking.publishableKey, deviceID: "not-eves-phone", batchID: 1,
                device: DeviceIntents(
                    name: "Eve?", metadata: ["user_id": .string(eve)], tracking: true, available: true, changedAt: Date()),
                locations: [DeviceLocation(latitude: 47.9, longitude: 35.2, recordedAt: Date().addingTimeInterval(-60), accuracy: 5)])
            // A phone claiming to be Eve's is refused by tracking (her account names another device),
            // so it cannot go off duty in her name and take her offer away.
            let refused = try await platform.tracking.callRaw(
                "ingest", json: String(decoding: try JSONCoding.encode(impostor), as: UTF8.self))
            #expect(
                refused.status == 409 && String(decoding: refused.json, as: UTF8.self).contains("device_in_use"),
                "\(String(decoding: refused.json, as: UTF8.self))")
            let unknown = try await platform.tracking.callRaw(
                "set_availability",
                json: String(
                    decoding: try JSONCoding.encode(SetAvailabilityParams(deviceID: "not-eves-phone", available: false)), as: UTF8.self))
            #expect(unknown.status == 404, "the refused phone was never stored")
            try await Task.sleep(for: .seconds(1.5))
            #expect(
                try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["offered_to"] == .array([.string(eve)]),
                "still Eve's")
        }
    }

    /// A device belongs to the driver whose account names it: a batch that would give Dan's phone
    /// to Eve (or to no account at all) is refused and changes nothing; Dan's own claim is accepted.
    @Test func aDevicesOwnerIsTheDriverWhoseAccountNamesIt() async throws {
        try await withTestBus("orders-device-owner") { bus in
            let platform = try await Platform.start(bus)
            func claim(_ userID: String) async throws -> ServiceReply {
                let batch = IngestBatch(
                    publishableKey: TestTracking.publishableKey, deviceID: "dan-phone", batchID: 2,
                    device: DeviceIntents(name: "Eve's now", metadata: ["user_id": .string(userID)], changedAt: Date()),
                    locations: [DeviceLocation(latitude: 47.9, longitude: 35.2, recordedAt: Date().addingTimeInterval(-300), accuracy: 5)])
                return try await platform.tracking.callRaw("ingest", json: String(decoding: try JSONCoding.encode(batch), as: UTF8.self))
            }
            func dansPhone() async throws -> DeviceInfo { try await platform.tracking.call("device", DeviceParams(deviceID: "dan-phone")) }
            let before = try await dansPhone()
            let taken = try await claim(platform.driverIDs[1])
            #expect(
                taken.status == 409 && String(decoding: taken.json, as: UTF8.self).contains("device_in_use"),
                "\(String(decoding: taken.json, as: UTF8.self))")
            let nobody = try await claim("d-no-such-driver")
            #expect(
                nobody.status == 422 && String(decoding: nobody.json, as: UTF8.self).contains("unknown_user"),
                "\(String(decoding: nobody.json, as: UTF8.self))")
            let after = try await dansPhone()
            #expect(
                after.metadata == before.metadata && after.name == before.name && after.location == before.location,
                "refused batches store nothing")
            #expect(try await claim(platform.driverIDs[0]).status == 200, "Dan's own phone")
        }
    }

    @Test func bookingOffersTheNearestDriversAndTheFirstAcceptWins() async throws {
        try await withTestBus("orders") { bus in
            var statuses: EventSubscriber<OrderStatusChanged>?
            let platform = try await Platform.start(bus) {
                statuses = try await EventSubscriber<OrderStatusChanged>(
                    endpoint: bus.egress, prefixes: ["order.status."], logger: testLogger)
            }
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            #expect(created.status == 201, "\(created.body)")
            #expect(created.body["status"] == "NEW")
            #expect(created.body["rider"]?["name"] == "Ann")
            #expect(created.body["offered_to"] == .array(platform.driverIDs.map(JSONValue.string)), "nearest first")
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("no id") }
            let order = #""id":"\#(id)""#

            // Offered drivers see it in their list; the rider in hers.
            #expect(try await platform.call("list", as: platform.dan).body["orders"]?[0]?["id"] == .string(id))
            #expect(try await platform.call("list", as: platform.ann).body["orders"]?[0]?["id"] == .string(id))
            let near = try await platform.call(
                "list", as: platform.eve, #""status":"NEW","near":{"latitude":47.836,"longitude":35.1146,"radius":1000}"#)
            #expect(near.body["orders"]?[0]?["id"] == .string(id))

            // Both drivers accept at once: exactly one wins, the other is told the status.
            async let first = platform.call("accept", as: platform.dan, order)
            async let second = platform.call("accept", as: platform.eve, order)
            let replies = try await [first, second]
            #expect(replies.map(\.status).sorted() == [200, 409], "\(replies)")
            let loser = replies.first { $0.status == 409 }
            #expect(loser?.body["error"]?["code"] == "illegal_transition")
            // The current status: ACCEPTED, or PICKING_UP if the reactor has already moved on.
            let told = loser?.body["error"]?["message"]?.stringValue ?? ""
            #expect(told.contains("ACCEPTED") || told.contains("PICKING_UP"), "\(told)")
            let winner = replies.first { $0.status == 200 }!
            #expect(winner.body["status"] == "ACCEPTED")
            #expect(winner.body["driver"]?["car"]?["model"] == "Prius")
            #expect(winner.body["offered_to"] == .array([]))

            // The statuses on the bus, once each, in order, from the outbox.
            let events = try await collect(statuses!, count: 2)
            #expect(events.map(\.topic) == ["order.status.NEW", "order.status.ACCEPTED"])
            #expect(events.map(\.event.sequence) == [1, 2])
            #expect(events[1].event.data.previousStatus == .new)
            await statuses!.close()

            // Too early to start the ride (the reactor moves it to PICKING_UP, arrival to REACHED_PICKUP).
            let driver = winner.body["driver"]?["id"] == .string(platform.driverIDs[0]) ? platform.dan : platform.eve
            let early = try await platform.call("start_ride", as: driver, order)
            #expect(early.status == 409)
            // The rider cancels; the order is closed and she may book again.
            let cancelled = try await platform.call("cancel", as: platform.ann, order + #","reason":"changed my mind""#)
            #expect(cancelled.body["status"] == "CANCELLED")
            #expect(try await platform.call("cancel", as: platform.ann, order).status == 409)
            #expect(try await platform.call("create", as: platform.ann, Self.trip).status == 201)
        }
    }

    /// One ride at a time: a driver on a ride — whose phone still says available — is not offered
    /// new orders and cannot accept one offered before; once the ride is over they are offered again.
    @Test func aDriverOnARideIsNotOfferedAnotherOrderAndCannotAcceptOne() async throws {
        try await withTestBus("orders-busy") { bus in
            let platform = try await Platform.start(bus)
            let bob = (
                "rider",
                try await platform.register(#"{"role":"rider","name":"Bob","phone_number":"+380501234569","password":"secret123"}"#)
            )
            let cat = (
                "rider",
                try await platform.register(#"{"role":"rider","name":"Cat","phone_number":"+380501234570","password":"secret123"}"#)
            )
            func book(_ rider: (String, String)) async throws -> (id: String, offeredTo: JSONValue?) {
                let created = try await platform.call("create", as: rider, Self.trip)
                guard created.status == 201, case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
                return (id, created.body["offered_to"])
            }
            let drivers = JSONValue.array(platform.driverIDs.map(JSONValue.string))
            let annsRide = try await book(platform.ann)
            let bobsRide = try await book(bob)
            #expect(bobsRide.offeredTo == drivers, "both free: both offered")
            let accepted = try await platform.call("accept", as: platform.dan, #""id":"\#(annsRide.id)""#)
            #expect(accepted.status == 200)
            // The same accept again (a retry after a lost reply): the order as it is, not a 409.
            let again = try await platform.call("accept", as: platform.dan, #""id":"\#(annsRide.id)""#)
            #expect(again.status == 200, "\(again.body)")
            #expect(again.body["driver"]?["id"] == .string(platform.driverIDs[0]))
            #expect(again.body["status"] == "ACCEPTED" || again.body["status"] == "PICKING_UP", "\(again.body)")

            // Dan's offer of Bob's ride is withdrawn (he took Ann's); Eve's stays.
            try await eventually("Bob's ride leaves Dan") {
                try await platform.call("get", as: bob, #""id":"\#(bobsRide.id)""#).body["offered_to"]
                    == .array([.string(platform.driverIDs[1])])
            }
            let withdrawn = try await platform.call("get", as: bob, #""id":"\#(bobsRide.id)""#).body["version"]
            let refused = try await platform.call("accept", as: platform.dan, #""id":"\#(bobsRide.id)""#)
            #expect(refused.status == 409)
            #expect(refused.body["error"]?["code"] == "driver_busy")
            #expect(refused.body["error"]?["message"]?.stringValue?.contains(annsRide.id) == true, "names the open order: \(refused.body)")
            let unchanged = try await platform.call("get", as: bob, #""id":"\#(bobsRide.id)""#).body
            #expect(unchanged["status"] == "NEW")
            #expect(unchanged["version"] == withdrawn, "the refusal stored nothing")
            #expect(try await platform.call("accept", as: platform.eve, #""id":"\#(bobsRide.id)""#).status == 200)

            // Both drivers on rides, both phones still available: Cat's booking is offered to no one.
            let catsFirst = try await book(cat)
            #expect(catsFirst.offeredTo == .array([]))
            // Ann's ride ends (cancelled): Dan is free, and Cat's next booking goes to him alone.
            #expect(try await platform.call("cancel", as: platform.ann, #""id":"\#(annsRide.id)""#).status == 200)
            #expect(try await platform.call("cancel", as: cat, #""id":"\#(catsFirst.id)""#).status == 200)
            let catsSecond = try await book(cat)
            #expect(catsSecond.offeredTo == .array([.string(platform.driverIDs[0])]))
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(catsSecond.id)""#).status == 200)
        }
    }

    @Test func whoMayDoWhatAndBadInputChangeNothing() async throws {
        try await withTestBus("orders-bad") { bus in
            let platform = try await Platform.start(bus)
            let created = try await platform.call("create", as: platform.ann, Self.trip)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("no id: \(created)") }
            let order = #""id":"\#(id)""#
            let stranger = try await platform.register(
                #"{"role":"rider","name":"Zed","phone_number":"+380509999999","password":"secret123"}"#)

            // The same booking again (a retry after a late reply, a double tap): the ride it made; another: 409.
            let again = try await platform.call("create", as: platform.ann, Self.trip)
            #expect(again.status == 200 && again.body["id"] == .string(id), "\(again)")
            let elsewhere = Self.trip.replacingOccurrences(of: "35.1302", with: "35.1402")
            #expect(try await platform.call("create", as: platform.ann, elsewhere).body["error"]?["code"] == "open_order_exists")
            #expect(try await platform.call("create", as: platform.dan, Self.trip).status == 403, "drivers do not book")
            #expect(try await platform.call("create", as: ("rider", "r-nobody"), Self.trip).status == 422)
            let bad: [(String, String)] = [
                (#""pickup":{"latitude":91,"longitude":35},"dropoff":{"latitude":47.85,"longitude":35.13}"#, "pickup.latitude"),
                (#""pickup":{"latitude":47.8359,"longitude":35.1146},"dropoff":{"latitude":47.8359,"longitude":35.1147}"#, "dropoff:"),
                (#""pickup":{"latitude":47.8359},"dropoff":{"latitude":47.85,"longitude":35.13}"#, "pickup.longitude"),
            ]
            for (fields, field) in bad {
                let reply = try await platform.call("create", as: ("rider", stranger), fields)
                #expect(reply.status == 422, "\(fields)")
                #expect(reply.body["error"]?["message"]?.stringValue?.contains(field) == true, "\(reply.body)")
            }
            #expect(try await platform.orders.call("create", "{nope").status == 400)
            #expect(try await platform.orders.call("get", #"{"id":"\#(id)"}"#).status == 422, "no caller")

            #expect(try await platform.call("get", as: ("rider", stranger), order).status == 403)
            #expect(try await platform.call("cancel", as: ("rider", stranger), order).status == 403)
            #expect(try await platform.call("accept", as: platform.ann, order).status == 403)
            #expect(try await platform.call("get", as: platform.ann, #""id":"o-nope""#).status == 404)
            #expect(
                try await platform.call(
                    "list", as: platform.ann, #""status":"NEW","near":{"latitude":47.8,"longitude":35.1,"radius":1000}"#
                ).status == 403)

            // A decline takes the driver off the order for good.
            let declined = try await platform.call("decline", as: platform.dan, order)
            #expect(declined.body["offered_to"] == .array([.string(platform.driverIDs[1])]))
            #expect(try await platform.call("get", as: platform.dan, order).status == 403)

            // Of all that, only the booking was an event: nothing refused was stored.
            let page = try await platform.orders.call("events", #"{"after":0}"#)
            #expect(page.body["last_sequence"] == 1)
            let stored = try await platform.call("get", as: platform.ann, order)
            #expect(stored.body["status"] == "NEW")
            #expect(stored.body["version"] == 2, "created, then declined once")
        }
    }
}
