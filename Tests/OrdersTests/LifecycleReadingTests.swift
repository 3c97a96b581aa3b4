import Bus
import Foundation
import RideModels
import Testing

@testable import UsersService

/// The one-pass readers of lifecycle events (`JSONReadable`) against JSONDecoder: the common
/// events are read by the fast path, and on any input — including thousands of mutations of
/// those events — a value it reads is the value JSONDecoder decodes.
@Suite struct LifecycleReadingTests {
    typealias Event = CloudEvent<LifecycleEvent>
    static let time = Date(timeIntervalSince1970: 1_790_000_000.123)

    static func tripEvents() -> [TripEvent] {
        let metadata: [String: JSONValue] = ["order_id": .string("o1"), "leg": .string("pickup"), "n": .number(2.5), "tags": .array([.bool(false), .null])]
        let estimate = Trip.Estimate(arriveAt: time.addingTimeInterval(60), route: .init(distance: 900, duration: 60, remainingDuration: 60))
        return [
            TripEvent(createdAt: time, deviceID: "dan-phone", data: .init(value: "destination_arrival", tripID: "t1", tripMetadata: metadata, arrivedAt: time)),
            TripEvent(createdAt: time, deviceID: "dan-phone", data: .init(value: "destination_arrival", tripID: "t2", tripMetadata: nil)),
            TripEvent(createdAt: time, deviceID: "dan-phone", data: .init(value: "eta", tripID: "t1", tripMetadata: metadata, estimate: estimate)),
            TripEvent(createdAt: time, deviceID: "dan-phone", data: .init(value: "created", tripID: "t1", tripMetadata: metadata, estimate: estimate)),
        ]
    }

    /// Events as services publish them; `fast` says whether the fast path is meant to read them.
    static func events() throws -> [(bytes: [UInt8], fast: Bool)] {
        var events: [(bytes: [UInt8], fast: Bool)] = []
        for (index, order) in OrderJSONTests.orders().enumerated() {
            let change = OrderStatusChanged(order: order, previousStatus: index == 0 ? nil : .accepted)
            events.append((try CloudEvent(source: "orders", type: "order.status.\(order.status.rawValue)", sequence: UInt64(index + 1), data: change).encoded(),
                           !order.rider.name.contains("\"")))
        }
        var plain = OrderJSONTests.orders()[1]
        plain.rider.name = "Zoë"
        plain.pickup.address = "Sobornyi Ave 1"
        plain.driver = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+380671234567", deviceID: "dan-phone", car: Car(model: "Prius", licensePlate: "AB 1234"),
                            createdAt: time)
        plain.driver?.rating = UserRating(average: 4.5, count: 2)
        plain.surge = 1.25
        events.append((try CloudEvent(source: "orders", type: "order.status.ACCEPTED", sequence: 9, data: OrderStatusChanged(order: plain, previousStatus: .new)).encoded(), true))
        // A completed ride: fare, summary and both ratings.
        var completed = plain
        completed.status = .completed
        completed.tripID = "t-2"
        completed.fare = Fare(currency: "USD", totalCents: 1234, distanceMetres: 5400, durationSeconds: 900, surge: 1.25)
        completed.summary = TripSummary(locations: .init(coordinates: [[35.1, 47.8], [35.11, 47.81]]), distance: 5400, duration: 900, startedAt: time,
                                        completedAt: time.addingTimeInterval(900), deviceID: "dan-phone",
                                        markers: [.init(type: "arrival", recordedAt: time.addingTimeInterval(890), location: GeoJSONPoint(latitude: 47.81, longitude: 35.11))])
        completed.ratingByRider = RatingGiven(stars: 5, comment: "Smooth ride", createdAt: time.addingTimeInterval(1000))
        completed.ratingByDriver = RatingGiven(stars: 4, createdAt: time.addingTimeInterval(1001))
        events.append((try CloudEvent(source: "orders", type: "order.status.COMPLETED", sequence: 11, data: OrderStatusChanged(order: completed, previousStatus: .reachedDropoff)).encoded(), true))
        // Computed coordinates (a point moved along a bearing) are written with 16 or 17 digits.
        plain.pickup = Place(latitude: 47.008983152841195, longitude: 30.013180201958327)
        plain.dropoff = Place(latitude: -33.86785000000001, longitude: 151.20732000000001)
        events.append((try CloudEvent(source: "orders", type: "order.status.PICKING_UP", sequence: 10, data: OrderStatusChanged(order: plain, previousStatus: .accepted)).encoded(), true))
        for (index, trip) in tripEvents().enumerated() {
            events.append((try CloudEvent(source: "trips", type: "trip.\(trip.data.value)", sequence: UInt64(index + 1), data: trip).encoded(), true))
        }
        let payment: JSONValue = .object(["order_id": .string("o1"), "amount_cents": .number(1234), "note": .string("tip \"included\"")])
        events.append((try CloudEvent(source: "orders", type: "order.payment", sequence: 20, data: payment).encoded(), false))
        events.append((try CloudEvent(source: "orders", type: "order.message", sequence: 21, data: JSONValue.object(["text": .string("on my way")])).encoded(), true))
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

    /// ride-users follows every `orders` event for the ratings: the others, status changes above
    /// all, are skipped in one pass; a rating goes to JSONDecoder.
    @Test func usersSkipsOrdersEventsButRatingsInOnePass() throws {
        typealias UsersEvent = CloudEvent<RatingsReactor.OrdersEvent>
        let rated = OrderRated(orderID: "o1", raterID: "r1", raterRole: .rider, rateeID: "d1", rating: RatingGiven(stars: 5, createdAt: Self.time))
        let rating = try CloudEvent(source: "orders", type: "order.rated", sequence: 30, data: rated).encoded()
        #expect(UsersEvent.readWhole(rating) == nil)
        #expect(try JSONCoding.decode(UsersEvent.self, from: rating).data == .rated(rated))
        let orders = try Self.events().map(\.bytes).filter { String(decoding: $0, as: UTF8.self).contains(#""source":"orders""#) }
        for bytes in orders where !String(decoding: bytes, as: UTF8.self).contains(#"\""#) {
            #expect(UsersEvent.readWhole(bytes)?.data == .other, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(Self.mutationsAgree(orders + [rating], as: UsersEvent.self) > 100)
    }

    /// The riders' and drivers' requests of every ride (create, accept, start_ride, end_ride):
    /// written as JSONEncoder writes them, read in one pass as JSONDecoder reads them.
    @Test func ridersAndDriversRequestsAreWrittenAndReadAsFoundationDoes() throws {
        let encoder = JSONCoding.encoder()
        let creations = [
            CreateOrderParams(caller: .rider("r1"), pickup: Place(latitude: 47.008983152841195, longitude: 30.013180201958327),
                              dropoff: Place(latitude: -33.86785000000001, longitude: 151.20732000000001, address: "Sobornyi Ave 1")),
            CreateOrderParams(caller: .rider("r \"2\""), pickup: Place(latitude: 1, longitude: 2, address: "line\nbreak"), dropoffPlaceID: "work"),
            CreateOrderParams(caller: .driver("d1"), pickupPlaceID: "home", dropoffPlaceID: "p-3"),
        ]
        let orderOps = [OrderParams(caller: .driver("d1"), id: "o1"), OrderParams(caller: .rider("r1"), id: "o-2", reason: "changed my mind")]
        for creation in creations {
            #expect(String(decoding: creation.jsonBytes, as: UTF8.self) == String(decoding: try encoder.encode(creation), as: UTF8.self))
            #expect(try JSONCoding.decode(CreateOrderParams.self, from: creation.jsonBytes) == creation)
        }
        for params in orderOps {
            #expect(String(decoding: params.jsonBytes, as: UTF8.self) == String(decoding: try encoder.encode(params), as: UTF8.self))
            #expect(OrderParams.readWhole(params.jsonBytes) == params, "the fast path reads it")
        }
        #expect(CreateOrderParams.readWhole(creations[0].jsonBytes) == creations[0], "the fast path reads it")
        #expect(CreateOrderParams.readWhole(creations[1].jsonBytes) == nil, "an escape goes to JSONDecoder")
        #expect(Self.mutationsAgree(creations.map(\.jsonBytes), as: CreateOrderParams.self) > 50)
        #expect(Self.mutationsAgree(orderOps.map(\.jsonBytes), as: OrderParams.self) > 50)
    }

    static func trips() -> [Trip] {
        let destination = Trip.Destination(geometry: GeoJSONPoint(latitude: 47.8404, longitude: 35.1226), radius: 30, address: "Sobornyi Ave 1")
        var trip = Trip(tripID: "t-1", shareID: "Ab3dE7x", deviceID: "dan-phone", status: .active, startedAt: time, destination: destination,
                        metadata: ["order_id": .string("o1"), "leg": .string("pickup")])
        var trips = [trip]
        trip.estimate = Trip.Estimate(arriveAt: time.addingTimeInterval(60), route: .init(distance: 900, duration: 60, remainingDuration: 45))
        trips.append(trip)
        trip.status = .completed
        trip.completedAt = time.addingTimeInterval(600)
        trip.destination.arrivedAt = time.addingTimeInterval(590)
        trip.estimate = nil
        trip.summary = TripSummary(locations: .init(coordinates: [[35.1, 47.8], [35.11, 47.81]]), distance: 5400, duration: 600, startedAt: time,
                                   completedAt: time.addingTimeInterval(600), deviceID: "dan-phone",
                                   markers: [.init(type: "arrival", recordedAt: time.addingTimeInterval(590), location: destination.geometry)])
        trips.append(trip)
        trip.destination.geometry = GeoJSONPoint(latitude: 47.017966305682390, longitude: 30.013180201958327)
        trips.append(trip)
        return trips
    }

    @Test func tripCreationsAreReadByTheFastPathAsJSONDecoderDecodesThem() throws {
        let point = GeoJSONPoint(latitude: 47.017966305682390, longitude: 30.013180201958327)
        let creations = [
            CreateTripParams(deviceID: "dan-phone", destination: .init(geometry: point), metadata: nil, idempotencyKey: nil),
            CreateTripParams(deviceID: "dan-phone", destination: .init(geometry: point, radius: 30, address: "Sobornyi Ave 1"),
                             metadata: ["order_id": .string("o1"), "leg": .string("pickup")], idempotencyKey: "o1-pickup"),
        ]
        let bytes = try creations.map { try JSONCoding.encode($0) }
        for (creation, bytes) in zip(creations, bytes) {
            #expect(CreateTripParams.readWhole(bytes) == creation, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(Self.mutationsAgree(bytes, as: CreateTripParams.self) > 50)
    }

    /// Numbers as our writers put them (the shortest form that reads back the same double: up to
    /// 17 digits) and longer ones: the reader gives the double JSONDecoder gives, and the written one.
    @Test func numbersOfManyDigitsAreReadAsJSONDecoderReadsThem() throws {
        func fast(_ text: String) -> Double? {
            Array(text.utf8).withUnsafeBufferPointer { buffer in
                var reader = JSONFastReader(bytes: buffer)
                guard let value = reader.number(), reader.atEnd() else { return nil }
                return value
            }
        }
        func decoded(_ text: String) -> Double? { try? JSONCoding.decoder().decode([Double].self, from: Data("[\(text)]".utf8)).first }
        var random = SystemRandomNumberGenerator()
        var written: [Double] = (0..<3000).map { _ in Double.random(in: -180...180, using: &random) }
        written += (0..<3000).map { _ in Double(bitPattern: random.next()) }.filter { $0.isFinite }
        var checked = 0
        for value in written {
            let text = "\(value)"
            guard !text.contains("e") else { continue }  // exponents are JSONDecoder's
            #expect(fast(text) == value, "\(text)")
            #expect(fast(text) == decoded(text), "\(text)")
            checked += 1
        }
        #expect(checked > 3000)
        for _ in 0..<2000 {
            let digits = (0..<Int.random(in: 16...40, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            let point = Int.random(in: 1..<digits.count, using: &random)
            var text = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            while text.hasPrefix("0"), !text.hasPrefix("0.") { text.removeFirst() }
            if Bool.random(using: &random) { text = "-" + text }
            #expect(fast(text) != nil && fast(text) == decoded(text), "\(text)")
        }
        #expect(fast("0." + String(repeating: "1", count: 41)) == nil, "more than 40 digits: JSONDecoder's")
        #expect(fast("1.2345678901234567e5") == nil, "an exponent: JSONDecoder's")
    }

    @Test func tripsAreReadByTheFastPathAsJSONDecoderDecodesThem() throws {
        for trip in Self.trips() {
            #expect(Trip.readWhole(trip.jsonBytes) == trip, "\(String(decoding: trip.jsonBytes, as: UTF8.self))")
        }
        let completed = try #require(Self.trips().last)
        let event = TripEvent(createdAt: Self.time, deviceID: "dan-phone", data: .init(value: "completed", tripID: "t-1", tripMetadata: completed.metadata,
                                                                                     summary: completed.summary))
        #expect(TripEvent.readWhole(event.jsonBytes) == event)
        let reads = Self.mutationsAgree(Self.trips().map(\.jsonBytes) + [event.jsonBytes], as: Trip.self)
            + Self.mutationsAgree([event.jsonBytes], as: TripEvent.self)
        #expect(reads > 50)
    }

    /// Mutates each of `originals` many times (bytes removed, JSON pieces put in); wherever the
    /// fast path reads a value, JSONDecoder must decode the same bytes to the same value. Returns
    /// how many mutations the fast path read.
    static func mutationsAgree<Value: JSONReadable & Equatable>(_ originals: [[UInt8]], as: Value.Type,
                                                                sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var random = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = ["\"", "\\", "{", "}", "[", "]", ",", ":", "null", "0", "-", ".", "e", " ", "\"x\":1,", "\"order\":null,", "\"data\":{},",
                                 "\"value\":\"destination_arrival\","].map { Array($0.utf8) }
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
        guard case .order(let change) = try JSONCoding.decode(Event.self, from: Array(escaped.utf8)).data else { Issue.record("not an order"); return }
        #expect(change.order.driver?.name == "Dan", "JSONDecoder reads what the fast path left")
    }
}
