import Bus
import Foundation
import Geo
import RideModels
import ServiceKit
import Testing
import Wire

/// What a taxi app adds (AxRide), through `ride-gateway` with the real services: saved places,
/// fare estimates, chat, ratings, payments, history, earnings, surge, declines and availability.
@Suite(.serialized) struct RideExtrasIntegrationTests {
    typealias Apps = GatewayIntegrationTests.Apps
    static let pickup = GatewayIntegrationTests.pickup
    static let dropoff = GatewayIntegrationTests.dropoff

    static func place(_ point: GeoPoint, _ address: String? = nil) -> String {
        #"{"latitude":\#(point.latitude),"longitude":\#(point.longitude)\#(address.map { #","address":"\#($0)""# } ?? "")}"#
    }

    @Test func aRideWithSavedPlacesChatRatingsPaymentHistoryAndEarnings() async throws {
        try await withTestBus("ride-extras") { bus in
            _ = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            let apps = try await Apps.start(bus)
            let gateway = apps.gateway
            let (rider, driver) = (apps.rider.token, apps.driver.token)
            let outsider = try await gateway.signUp(
                #"{"role":"rider","name":"Oz","phone_number":"+380501110009","password":"secret123"}"#,
                phone: "+380501110009", password: "secret123")

            // Saved places: home and work (saving home again replaces it, same id); "other" needs a name.
            let home = try await gateway.request(
                "POST", "/v1/me/places", token: rider, #"{"label":"home","place":\#(Self.place(Self.dropoff))}"#)
            #expect(home.status == 201, "\(home.body)")
            let homeAgain = try await gateway.request(
                "POST", "/v1/me/places", token: rider, #"{"label":"home","place":\#(Self.place(Self.pickup, "Sobornyi Ave 1"))}"#)
            #expect(homeAgain.body["id"] == home.body["id"] && homeAgain.body["place"]?["address"] == "Sobornyi Ave 1")
            let work = try await gateway.request(
                "POST", "/v1/me/places", token: rider, #"{"label":"work","place":\#(Self.place(Self.dropoff, "Plant"))}"#)
            let unnamed = try await gateway.request(
                "POST", "/v1/me/places", token: rider, #"{"label":"other","place":\#(Self.place(Self.dropoff))}"#)
            #expect(unnamed.status == 422 && unnamed.body["error"]?["message"] == "name: required for a place labelled other")
            let badPlace = try await gateway.request(
                "POST", "/v1/me/places", token: rider, #"{"label":"work","place":{"latitude":91,"longitude":0}}"#)
            #expect(
                badPlace.status == 422 && badPlace.body["error"]?["message"]?.stringValue?.hasPrefix("place.latitude") == true,
                "\(badPlace.body)")
            let gym = try await gateway.request(
                "POST", "/v1/me/places", token: rider, #"{"label":"other","name":"Gym","place":\#(Self.place(Self.dropoff))}"#)
            #expect(try await gateway.request("GET", "/v1/me/places", token: rider).body["places"]?.arrayValue?.count == 3)
            #expect(try await gateway.request("GET", "/v1/me/places", token: outsider.token).body["places"] == .array([]), "only one's own")
            let gymID = gym.body["id"]?.stringValue ?? ""
            #expect(
                try await gateway.request("DELETE", "/v1/me/places/\(gymID)", token: outsider.token).status == 404, "not theirs to delete")
            #expect(try await gateway.request("DELETE", "/v1/me/places/\(gymID)", token: rider).body["places"]?.arrayValue?.count == 2)
            guard let homeID = home.body["id"]?.stringValue, let workID = work.body["id"]?.stringValue else {
                throw TestFailure("places: \(home) \(work)")
            }
            let byIDs = #"{"pickup_place_id":"\#(homeID)","dropoff_place_id":"\#(workID)"}"#

            // A fare estimate from saved places: the route model's distance, the schedule's fare.
            let estimate = try await gateway.request("POST", "/v1/fares/estimate", token: rider, byIDs)
            #expect(estimate.status == 200, "\(estimate.body)")
            let straight = Self.pickup.distance(to: Self.dropoff)
            let metres = estimate.body["distance_m"]?.numberValue ?? 0
            #expect(abs(metres - straight * 1.3) < 2, "straight line × 1.3: \(metres) vs \(straight)")
            let seconds = estimate.body["duration_s"]?.numberValue ?? 0
            let expectedFare = max(500, (250 + metres / 1000 * 120 + seconds / 60 * 30).rounded())
            #expect(
                estimate.body["total_cents"]?.numberValue.map { abs($0 - expectedFare) <= 1 } == true, "\(estimate.body) vs \(expectedFare)"
            )
            #expect(estimate.body["surge"] == 1)
            #expect(try await gateway.request("POST", "/v1/fares/estimate", token: driver, byIDs).status == 403, "riders estimate")
            let foreign = try await gateway.request("POST", "/v1/fares/estimate", token: outsider.token, byIDs)
            #expect(
                foreign.status == 422
                    && foreign.body["error"]?["message"]?.stringValue?.hasPrefix("pickup_place_id: no saved place") == true,
                "\(foreign.body)")

            // Booking from saved places; the chat is closed until a driver accepts.
            let id = try await apps.bookAndAccept(byIDs)
            let order = try await gateway.request("GET", "/v1/orders/\(id)", token: rider).body
            #expect(order["pickup"]?["address"] == "Sobornyi Ave 1" && order["dropoff"]?["address"] == "Plant")

            // Chat while the driver is on the way: live on the WebSocket, as notifications, only the two parties.
            let riderLive = apps.live(id, token: rider)
            try await eventually("the snapshot arrived") { !riderLive.statuses.isEmpty }
            let sent = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: driver, #"{"text":"On my way, 2 minutes"}"#)
            #expect(sent.status == 201 && sent.body["number"] == 1 && sent.body["recipient_id"] == .string(apps.rider.id), "\(sent.body)")
            #expect(
                try await gateway.request("POST", "/v1/orders/\(id)/messages", token: rider, #"{"text":"I'm by the fountain"}"#).status
                    == 201)
            for (token, status) in [(outsider.token, 403)] {
                #expect(try await gateway.request("GET", "/v1/orders/\(id)/messages", token: token).status == status)
                #expect(try await gateway.request("POST", "/v1/orders/\(id)/messages", token: token, #"{"text":"hi"}"#).status == status)
            }
            let blank = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: rider, #"{"text":"   "}"#)
            #expect(blank.status == 422 && blank.body["error"]?["message"] == "text: must be more than spaces")
            let chat = try await gateway.request("GET", "/v1/orders/\(id)/messages", token: driver).body
            #expect(
                chat["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } == ["On my way, 2 minutes", "I'm by the fountain"])
            #expect(chat["open"] == true)
            #expect(
                try await gateway.request("GET", "/v1/orders/\(id)/messages?after=1", token: rider).body["messages"]?.arrayValue?.count == 1
            )
            try await eventually("the rider's WebSocket got the driver's message") {
                riderLive.received.contains { $0["type"] == "chat" && $0["message"]?["text"] == "On my way, 2 minutes" }
            }
            try await eventually("each heard of the other's message") {
                let riderInbox = try await gateway.request("GET", "/v1/notifications", token: rider).body["notifications"]?.arrayValue ?? []
                let driverInbox =
                    try await gateway.request("GET", "/v1/notifications", token: driver).body["notifications"]?.arrayValue ?? []
                return riderInbox.contains { $0["kind"] == "chat_message" && $0["body"] == "On my way, 2 minutes" }
                    && driverInbox.contains { $0["kind"] == "chat_message" && $0["body"] == "I'm by the fountain" }
            }

            try await apps.finish(id)
            riderLive.close()
            let closed = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: rider, #"{"text":"Thanks!"}"#)
            #expect(closed.status == 409 && closed.body["error"]?["message"]?.stringValue?.contains("read-only") == true, "\(closed.body)")
            #expect(try await gateway.request("GET", "/v1/orders/\(id)/messages", token: rider).body["open"] == false)

            // Ratings: once per side, 1–5, only the parties; the averages reach both profiles.
            let rated = try await gateway.request("POST", "/v1/orders/\(id)/rating", token: rider, #"{"stars":5,"comment":"Smooth ride"}"#)
            #expect(rated.status == 200 && rated.body["rating_by_rider"]?["stars"] == 5, "\(rated.body)")
            let twice = try await gateway.request("POST", "/v1/orders/\(id)/rating", token: rider, #"{"stars":1}"#)
            #expect(twice.status == 409 && twice.body["error"]?["message"] == .string("you already rated order \(id)"))
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/rating", token: driver, #"{"stars":6}"#).status == 422)
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/rating", token: outsider.token, #"{"stars":1}"#).status == 403)
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/rating", token: driver, #"{"stars":4}"#).status == 200)
            try await eventually("both profiles show their rating") {
                let dan = try await gateway.request("GET", "/v1/me", token: driver).body["rating"]
                let ann = try await gateway.request("GET", "/v1/me", token: rider).body["rating"]
                return dan == ["average": 5, "count": 1] && ann == ["average": 4, "count": 1]
            }

            // The payment: the fare through the ledger, 80% to the driver; once.
            let fare = rated.body["fare"]?["total_cents"]?.numberValue ?? -1
            try await eventually("the ride is paid") {
                try await gateway.request("GET", "/v1/orders/\(id)/payment", token: rider).status == 200
            }
            let payment = try await gateway.request("GET", "/v1/orders/\(id)/payment", token: driver).body
            #expect(payment["amount_cents"]?.numberValue == fare && payment["provider"] == "ledger", "\(payment)")
            #expect(payment["driver_earnings_cents"]?.numberValue == (fare * 80 / 100).rounded(.down))
            #expect(try await gateway.request("GET", "/v1/orders/\(id)/payment", token: outsider.token).status == 403)

            // History, newest first, with the summary, fare, ratings and payment; paged.
            let history = try await gateway.request("GET", "/v1/me/history", token: rider).body
            let ride = history["rides"]?[0]
            #expect(ride?["order"]?["id"] == .string(id) && ride?["order"]?["summary"]?["distance"] != nil)
            #expect(ride?["order"]?["rating_by_driver"]?["stars"] == 4 && ride?["payment"]?["amount_cents"]?.numberValue == fare)
            #expect(history["next_before"] == nil, "one ride, one page")
            #expect(try await gateway.request("GET", "/v1/me/history", token: driver).body["rides"]?[0]?["order"]?["id"] == .string(id))
            #expect(try await gateway.request("GET", "/v1/me/history", token: outsider.token).body["rides"] == .array([]))
            #expect(try await gateway.request("GET", "/v1/me/history?before=garbage", token: rider).status == 422)

            // Earnings per day: the driver's only.
            let earnings = try await gateway.request("GET", "/v1/me/earnings", token: driver).body
            #expect(earnings["days"]?[0]?["rides"] == 1 && earnings["total_cents"] == payment["driver_earnings_cents"], "\(earnings)")
            #expect(earnings["days"]?[0]?["day"]?.stringValue == UTCDayString.today)
            #expect(try await gateway.request("GET", "/v1/me/earnings", token: rider).status == 403)
            #expect(try await gateway.request("GET", "/v1/me/earnings?days=0", token: driver).status == 422)

            // Notifications of the rating and the receipt; the rider's rating shows on the next offer.
            try await eventually("the rating and the receipt were notified") {
                let riderKinds =
                    try await gateway.request("GET", "/v1/notifications", token: rider).body["notifications"]?.arrayValue?.compactMap {
                        $0["kind"]?.stringValue
                    } ?? []
                let driverKinds =
                    try await gateway.request("GET", "/v1/notifications", token: driver).body["notifications"]?.arrayValue?.compactMap {
                        $0["kind"]?.stringValue
                    } ?? []
                return riderKinds.contains("receipt") && riderKinds.contains("rated") && driverKinds.contains("rated")
            }
            _ = try await gateway.request("POST", "/v1/orders", token: rider, GatewayIntegrationTests.booking)
            let offer = try await gateway.request("GET", "/v1/orders?status=NEW", token: driver).body["orders"]?[0]
            #expect(offer?["rider"]?["rating"] == ["average": 4, "count": 1], "drivers see the rider's rating: \(offer ?? .null)")
        }
    }

    /// Three drivers around the pickup: Fay nearest but offline, Dan, then Eve. Orders offer each
    /// order to one driver at a time.
    @Test func aDeclinedOfferGoesToTheNextDriverAndOfflineDriversGetNone() async throws {
        try await withTestBus("ride-declines") { bus in
            _ = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            let apps = try await Apps.start(bus, orders: ["--dispatch-drivers", "1"])
            let gateway = apps.gateway
            let eve = try await Self.driver("Eve", phone: "+380671110002", at: Self.pickup.destination(bearing: 0, distance: 800), gateway)
            let fay = try await Self.driver("Fay", phone: "+380671110003", at: Self.pickup.destination(bearing: 90, distance: 150), gateway)
            #expect(try await gateway.request("PUT", "/v1/me/availability", token: fay.token, #"{"available":false}"#).status == 200)

            let booked = try await gateway.request("POST", "/v1/orders", token: apps.rider.token, GatewayIntegrationTests.booking)
            guard let id = booked.body["id"]?.stringValue else { throw TestFailure("booking: \(booked)") }
            #expect(
                booked.body["offered_to"] == .array([.string(apps.driver.id)]), "Dan, the nearest available; Fay is offline: \(booked.body)"
            )

            // Dan watches the order while it is offered to him (as a driver app shows an offer)…
            let dansLive = apps.live(id, token: apps.driver.token)
            try await eventually("Dan's snapshot") { !dansLive.statuses.isEmpty }
            let declined = try await gateway.request("POST", "/v1/orders/\(id)/decline", token: apps.driver.token)
            #expect(declined.status == 200 && declined.body["offered_to"] == .array([.string(eve.id)]), "passed to Eve: \(declined.body)")
            #expect(declined.body["declined_by"] == .array([.string(apps.driver.id)]))
            let again = try await gateway.request("POST", "/v1/orders/\(id)/decline", token: apps.driver.token)
            #expect(again.status == 409 && again.body["error"]?["code"] == "already_declined", "once: \(again)")
            try await eventually("Eve heard of the offer") {
                try await gateway.request("GET", "/v1/notifications", token: eve.token).body["notifications"]?.arrayValue?
                    .contains { $0["kind"] == "new_offer" && $0["order_id"] == .string(id) } == true
            }
            let late = try await gateway.request("POST", "/v1/orders/\(id)/accept", token: apps.driver.token)
            #expect(
                late.status == 403 && late.body["error"]?["message"]?.stringValue?.contains("declined") == true, "Dan declined it: \(late)")
            let taken = try await gateway.request("POST", "/v1/orders/\(id)/accept", token: eve.token)
            #expect(taken.status == 200, "\(taken)")
            // …but the chat between the rider and Eve is theirs alone.
            let ridersLive = apps.live(id, token: apps.rider.token)
            try await eventually("the rider's snapshot") { !ridersLive.statuses.isEmpty }
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/messages", token: eve.token, #"{"text":"Coming"}"#).status == 201)
            try await eventually("the rider got Eve's message live") { ridersLive.received.contains { $0["type"] == "chat" } }
            try await Task.sleep(for: .milliseconds(300))
            #expect(!dansLive.received.contains { $0["type"] == "chat" }, "a driver who was only offered the order reads none of its chat")
            let refusal = dansLive.received.first { $0["type"] == "error" }
            #expect(
                refusal?["status"] == 403,
                "once Eve took it, Dan's connection was closed as refused: \(dansLive.received.map { $0["type"] ?? .null })")
            #expect(
                !dansLive.received.contains { $0["type"] == "status" && $0["order"]?["status"] == "PICKING_UP" },
                "and saw no status after that")
            #expect(try await gateway.request("GET", "/v1/orders/\(id)/messages", token: apps.driver.token).status == 403)
            // What Dan's app was shown of the offer: Ann's name, not her number or addresses (issue 38).
            let offer = try #require(dansLive.received.first { $0["type"] == "snapshot" }?["order"])
            #expect(
                offer["rider"]?["name"] == "Ann" && offer["rider"]?["phone_number"] == "" && offer["pickup"]?["address"] == nil, "\(offer)")
            // The rider cancels: the live status (the bus carries the whole order) shows Eve's name,
            // no longer her number or device.
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/cancel", token: apps.rider.token).body["status"] == "CANCELLED")
            try await eventually("the rider's app heard of the cancel") { ridersLive.statuses.contains("CANCELLED") }
            let cancelled = try #require(
                ridersLive.received.last { $0["type"] == "status" && $0["order"]?["status"] == "CANCELLED" }?["order"])
            #expect(
                cancelled["driver"]?["name"] == "Eve" && cancelled["driver"]?["phone_number"] == ""
                    && cancelled["driver"]?["device_id"] == nil, "\(cancelled)")
            dansLive.close()
            ridersLive.close()

            // Fay comes online: the next order is hers (the nearest).
            #expect(try await gateway.request("PUT", "/v1/me/availability", token: fay.token, #"{"available":true}"#).status == 200)
            let other = try await gateway.signUp(
                #"{"role":"rider","name":"Bo","phone_number":"+380501110004","password":"secret123"}"#,
                phone: "+380501110004", password: "secret123")
            let next = try await gateway.request("POST", "/v1/orders", token: other.token, GatewayIntegrationTests.booking)
            #expect(next.body["offered_to"] == .array([.string(fay.id)]), "\(next.body)")
        }
    }

    /// With surge on, orders waiting near the pickup for the one available driver raise the price.
    @Test func surgeRaisesTheQuotedFareWhenOrdersOutnumberDrivers() async throws {
        try await withTestBus("ride-surge") { bus in
            let apps = try await Apps.start(bus, orders: ["--surge", "3,2000,0.5"])
            let gateway = apps.gateway
            let calm = try await gateway.request("POST", "/v1/fares/estimate", token: apps.rider.token, GatewayIntegrationTests.booking)
            #expect(calm.body["surge"] == 1, "one rider, one driver: \(calm.body)")
            var surges: [JSONValue] = []
            for index in 1...3 {
                let phone = "+38050111002\(index)"
                let rider = try await gateway.signUp(
                    #"{"role":"rider","name":"R\#(index)","phone_number":"\#(phone)","password":"secret123"}"#,
                    phone: phone, password: "secret123")
                let order = try await gateway.request("POST", "/v1/orders", token: rider.token, GatewayIntegrationTests.booking)
                surges.append(order.body["surge"] ?? .null)
            }
            #expect(surges == [.null, 1.5, 2], "1, then 1 + (2 − 1) × 0.5, then 1 + (3 − 1) × 0.5: \(surges)")
            let busy = try await gateway.request("POST", "/v1/fares/estimate", token: apps.rider.token, GatewayIntegrationTests.booking)
            #expect(busy.body["surge"] == 2.5, "four waiting for one driver: \(busy.body)")
            let (metres, seconds) = (busy.body["distance_m"]?.numberValue ?? 0, busy.body["duration_s"]?.numberValue ?? 0)
            #expect(
                busy.body["total_cents"]?.numberValue == max(500, ((250 + metres / 1000 * 120 + seconds / 60 * 30) * 2.5).rounded()),
                "\(busy.body)")
        }
    }

    /// A driver signed up through the gateway, available at `point`.
    static func driver(_ name: String, phone: String, at point: GeoPoint, _ gateway: TestGateway) async throws -> (
        id: String, token: String
    ) {
        let device = "gw-\(name.lowercased())-phone"
        let driver = try await gateway.signUp(
            #"{"role":"driver","name":"\#(name)","phone_number":"\#(phone)","password":"driving9","device_id":"\#(device)","car":{"model":"Leaf","license_plate":"XY \#(phone.suffix(3))"}}"#,
            phone: phone, password: "driving9")
        #expect(try await gateway.request("PUT", "/v1/me/availability", token: driver.token, #"{"available":true}"#).status == 200)
        let fix =
            #"{"latitude":\#(point.latitude),"longitude":\#(point.longitude),"recorded_at":"\#(RFC3339.format(Date()))","accuracy":5}"#
        let posted = try await gateway.request(
            "POST", "/v1/devices/\(device)/locations", token: driver.token, #"{"batch_id":1,"locations":[\#(fix)]}"#)
        #expect(posted.status == 200, "\(posted.body)")
        return driver
    }
}

enum UTCDayString {
    static var today: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: Date())
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
