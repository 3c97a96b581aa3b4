import Bus
import Foundation
import RideContract
import RideModels
import Testing
import Wire

@testable import UsersService

/// The services' event dispatchers (`LifecycleEvent`, the users service's `OrdersEvent`) over the
/// derived one-pass readers, against JSONDecoder: the common events are read by the fast path, and
/// on thousands of mutations of them a value it reads is the value JSONDecoder decodes.
@Suite struct EventDispatchTests {
    typealias Event = CloudEvent<LifecycleEvent>
    static let time = Date(timeIntervalSince1970: 1_790_000_000.123)

    static func orders() -> [Order] {
        let rider = User(id: "r1", role: .rider, name: "Zoë \"Q\" \\ Smith\n😀", phoneNumber: "+380501234567", createdAt: time)
        let driver = User(
            id: "d1", role: .driver, name: "Dan", phoneNumber: "+380671234567", deviceID: "dan-phone",
            car: Car(model: "Prius </script>", licensePlate: "AB 1234"), createdAt: time.addingTimeInterval(0.5))
        let minimal = Order(
            id: "o1", status: .new, rider: rider, pickup: Place(latitude: 47, longitude: -35.5),
            dropoff: Place(latitude: 47.8404, longitude: 35.1226),
            createdAt: time, updatedAt: time)
        var offered = minimal
        offered.offeredTo = ["d1", "d2"]
        offered.offerHistory = ["d1", "d2", "d3"]
        offered.declinedBy = ["d3"]
        offered.dispatchRound = 2
        offered.offeredAt = time.addingTimeInterval(1)
        offered.pickup.address = "Sobornyi Ave 1, \u{0001}"
        var completed = offered
        completed.status = .completed
        completed.driver = driver
        completed.tripID = "t-1"
        completed.version = 9
        completed.cancelReason = "changed my mind / plans"
        completed.fare = Fare(currency: "USD", totalCents: 1234, distanceMetres: 5400, durationSeconds: 900)
        completed.summary = TripSummary(
            locations: .init(coordinates: [[35.1, 47.8], [35.11, 47.81]]), distance: 5400, duration: 900,
            startedAt: time, completedAt: time.addingTimeInterval(900), deviceID: "dan-phone", markers: [])
        var rated = completed
        rated.surge = 1.5
        rated.fare?.surge = 1.5
        rated.ratingByRider = RatingGiven(stars: 5, comment: "Smooth \"ride\"", createdAt: time.addingTimeInterval(1000))
        rated.ratingByDriver = RatingGiven(stars: 4, createdAt: time.addingTimeInterval(1001))
        rated.rider.rating = UserRating(average: 4.67, count: 3)
        return [minimal, offered, completed, rated]
    }

    static func tripEvents() -> [TripEvent] {
        let metadata: [String: JSONValue] = [
            "order_id": .string("o1"), "leg": .string("pickup"), "n": .number(2.5), "tags": .array([.bool(false), .null]),
        ]
        let estimate = Trip.Estimate(
            arriveAt: time.addingTimeInterval(60), route: .init(distance: 900, duration: 60, remainingDuration: 60))
        return [
            TripEvent(
                createdAt: time, deviceID: "dan-phone",
                data: .init(value: "destination_arrival", tripID: "t1", tripMetadata: metadata, arrivedAt: time)),
            TripEvent(createdAt: time, deviceID: "dan-phone", data: .init(value: "destination_arrival", tripID: "t2", tripMetadata: nil)),
            TripEvent(
                createdAt: time, deviceID: "dan-phone", data: .init(value: "eta", tripID: "t1", tripMetadata: metadata, estimate: estimate)),
            TripEvent(
                createdAt: time, deviceID: "dan-phone",
                data: .init(value: "created", tripID: "t1", tripMetadata: metadata, estimate: estimate)),
        ]
    }

    /// Events as services publish them; `fast` says whether the fast path is meant to read them.
    static func events() throws -> [(bytes: [UInt8], fast: Bool)] {
        var events: [(bytes: [UInt8], fast: Bool)] = []
        for (index, order) in Self.orders().enumerated() {
            let change = OrderStatusChanged(order: order, previousStatus: index == 0 ? nil : .accepted)
            events.append(
                (
                    try CloudEvent(source: "orders", type: Events.orderStatus.type, sequence: UInt64(index + 1), data: change).encoded(),
                    !order.rider.name.contains("\"")
                ))
        }
        var plain = Self.orders()[1]
        plain.rider.name = "Zoë"
        plain.pickup.address = "Sobornyi Ave 1"
        plain.driver = User(
            id: "d1", role: .driver, name: "Dan", phoneNumber: "+380671234567", deviceID: "dan-phone",
            car: Car(model: "Prius", licensePlate: "AB 1234"),
            createdAt: time)
        plain.driver?.rating = UserRating(average: 4.5, count: 2)
        plain.surge = 1.25
        events.append(
            (
                try CloudEvent(
                    source: "orders", type: Events.orderStatus.type, sequence: 9,
                    data: OrderStatusChanged(order: plain, previousStatus: .new)
                ).encoded(), true
            ))
        // A completed ride: fare, summary and both ratings.
        var completed = plain
        completed.status = .completed
        completed.tripID = "t-2"
        completed.fare = Fare(currency: "USD", totalCents: 1234, distanceMetres: 5400, durationSeconds: 900, surge: 1.25)
        completed.summary = TripSummary(
            locations: .init(coordinates: [[35.1, 47.8], [35.11, 47.81]]), distance: 5400, duration: 900, startedAt: time,
            completedAt: time.addingTimeInterval(900), deviceID: "dan-phone",
            markers: [
                .init(type: "arrival", recordedAt: time.addingTimeInterval(890), location: GeoJSONPoint(latitude: 47.81, longitude: 35.11))
            ])
        completed.ratingByRider = RatingGiven(stars: 5, comment: "Smooth ride", createdAt: time.addingTimeInterval(1000))
        completed.ratingByDriver = RatingGiven(stars: 4, createdAt: time.addingTimeInterval(1001))
        events.append(
            (
                try CloudEvent(
                    source: "orders", type: Events.orderStatus.type, sequence: 11,
                    data: OrderStatusChanged(order: completed, previousStatus: .reachedDropoff)
                )
                .encoded(), true
            ))
        // Computed coordinates (a point moved along a bearing) are written with 16 or 17 digits.
        plain.pickup = Place(latitude: 47.008983152841195, longitude: 30.013180201958327)
        plain.dropoff = Place(latitude: -33.86785000000001, longitude: 151.20732000000001)
        events.append(
            (
                try CloudEvent(
                    source: "orders", type: Events.orderStatus.type, sequence: 10,
                    data: OrderStatusChanged(order: plain, previousStatus: .accepted)
                ).encoded(), true
            ))
        for (index, trip) in tripEvents().enumerated() {
            events.append(
                (try CloudEvent(source: "trips", type: "trip.\(trip.data.value)", sequence: UInt64(index + 1), data: trip).encoded(), true))
        }
        let payment: JSONValue = .object(["order_id": .string("o1"), "amount_cents": .number(1234), "note": .string("tip \"included\"")])
        // Any other type is skipped in one pass, but for an escape in its data: JSONDecoder decides.
        events.append((try CloudEvent(source: "orders", type: "order.paid", sequence: 20, data: payment).encoded(), false))
        events.append(
            (
                try CloudEvent(
                    source: "orders", type: "order.message", sequence: 21, data: JSONValue.object(["text": .string("on my way")])
                ).encoded(), true
            ))
        return events
    }

    func reference(_ bytes: [UInt8]) -> Event? { try? JSONCoding.decoder().decode(Event.self, from: Data(bytes)) }

    @Test func theCommonEventsAreReadByTheFastPathAsJSONDecoderDecodesThem() throws {
        for (bytes, fast) in try Self.events() {
            let read = Event.readWhole(bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect((read != nil) == fast, "fast path for \(text)")
            if let read { #expect(read == reference(bytes), "\(text)") }
            #expect(try JSONCoding.decode(Event.self, from: bytes) == reference(bytes), "JSONCoding gives the same either way")
        }
    }

    @Test func onMutatedEventsTheFastPathNeverDisagreesWithJSONDecoder() throws {
        let reads = Self.mutationsAgree(try Self.events().map(\.bytes), as: Event.self)
        #expect(reads > 100, "some mutations still read (a space, an unknown member): the comparison ran")
    }

    /// ride-users follows every `orders` event for the ratings and drivers' cancels: the others,
    /// status changes above all, are skipped in one pass; a rating or a cancel goes to JSONDecoder.
    @Test func usersSkipsOrdersEventsButRatingsInOnePass() throws {
        typealias UsersEvent = CloudEvent<RatingsReactor.OrdersEvent>
        let rated = OrderRated(
            orderID: "o1", raterID: "r1", raterRole: .rider, rateeID: "d1", rating: RatingGiven(stars: 5, createdAt: Self.time))
        let rating = try CloudEvent(source: "orders", type: "order.rated", sequence: 30, data: rated).encoded()
        #expect(UsersEvent.readWhole(rating) == nil)
        #expect(try JSONCoding.decode(UsersEvent.self, from: rating).data == .rated(rated))
        let orders = try Self.events().map(\.bytes).filter { String(decoding: $0, as: UTF8.self).contains(#""source":"orders""#) }
        for bytes in orders where !String(decoding: bytes, as: UTF8.self).contains(#"\""#) {
            #expect(UsersEvent.readWhole(bytes)?.data == .other, "\(String(decoding: bytes, as: UTF8.self))")
        }
        let cancelled = DriverCancelled(orderID: "o1", driverID: "d1", redispatch: 1, cancelledAt: Self.time)
        let cancel = try CloudEvent(source: "orders", type: "order.driver_cancelled", sequence: 31, data: cancelled).encoded()
        #expect(UsersEvent.readWhole(cancel) == nil)
        #expect(try JSONCoding.decode(UsersEvent.self, from: cancel).data == .driverCancelled(cancelled))
        #expect(Self.mutationsAgree(orders + [rating, cancel], as: UsersEvent.self) > 100)
    }

    /// Mutates each of `originals` many times (bytes removed, JSON pieces put in); wherever the
    /// fast path reads a value, JSONDecoder must decode the same bytes to the same value. Returns
    /// how many mutations the fast path read.
    static func mutationsAgree<Value: JSONReadable & Equatable>(
        _ originals: [[UInt8]], as: Value.Type,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        var random = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [
            "\"", "\\", "{", "}", "[", "]", ",", ":", "null", "0", "-", ".", "e", " ", "\"x\":1,", "\"order\":null,", "\"data\":{},",
            "\"value\":\"destination_arrival\",",
        ].map { Array($0.utf8) }
        var fastReads = 0
        for original in originals {
            for _ in 0..<400 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes.remove(at: at)
                    case 1: bytes.insert(contentsOf: pieces.randomElement(using: &random)!, at: at)
                    default: bytes[at] = pieces.randomElement(using: &random)!.first!
                    }
                    if bytes.isEmpty { break }
                }
                guard let read = Value.readWhole(bytes) else { continue }
                fastReads += 1
                let reference = try? JSONCoding.decoder().decode(Value.self, from: Data(bytes))
                #expect(read == reference, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
            }
        }
        return fastReads
    }

    @Test func aRepeatedMemberOrAnEscapeGoesToJSONDecoder() throws {
        let event = try Self.events()[4].bytes
        let text = String(decoding: event, as: UTF8.self)
        let repeated = text.replacingOccurrences(of: #""id":"#, with: #""id":"x","id":"#)
        #expect(Event.readWhole(Array(repeated.utf8)) == nil)
        let escaped = text.replacingOccurrences(of: "Dan", with: #"D\u0061n"#)
        #expect(Event.readWhole(Array(escaped.utf8)) == nil)
        guard case .order(let change) = try JSONCoding.decode(Event.self, from: Array(escaped.utf8)).data else {
            Issue.record("not an order")
            return
        }
        #expect(change.order.driver?.name == "Dan", "JSONDecoder reads what the fast path left")
    }
}
