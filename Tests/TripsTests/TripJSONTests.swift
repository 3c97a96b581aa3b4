import Bus
import Foundation
import RideModels
import Testing

/// `Trip`'s and `TripEvent`'s hand-written JSON against JSONEncoder with the platform's settings:
/// the same bytes, and they decode back.
@Suite struct TripJSONTests {
    let reference = JSONCoding.encoder()

    static let time = Date(timeIntervalSince1970: 1_790_000_000.123)

    static func trips() -> [Trip] {
        let destination = Trip.Destination(geometry: GeoJSONPoint(latitude: 47.8404, longitude: 35.1226), radius: 30)
        let minimal = Trip(tripID: "t-1", shareID: "Ab3dE7x", deviceID: "dan-phone", status: .active, startedAt: time, destination: destination)
        var estimated = minimal
        estimated.estimate = Trip.Estimate(arriveAt: time.addingTimeInterval(421.5), route: .init(distance: 2870, duration: 422, remainingDuration: 0))
        estimated.metadata = ["order_id": .string("o-\"1\"\n"), "leg": .string("pickup"), "surge": .number(1.5), "seats": .number(3),
                              "tags": .array([.bool(true), .null, .object(["z": .number(-0.25), "a": .string("😀")])])]
        estimated.destination.address = "Sobornyi Ave 1, </script> \u{0001}"
        var completed = estimated
        completed.status = .completed
        completed.completedAt = time.addingTimeInterval(900)
        completed.destination.arrivedAt = Date(timeIntervalSince1970: 1_790_000_880.127)
        completed.destination.radius = 12.75
        completed.summary = TripSummary(locations: .init(coordinates: [[35.1, 47.8], [35.11, 47.81], [-0.000001, 90]]), distance: 5400, duration: 900,
                                        startedAt: time, completedAt: time.addingTimeInterval(900), deviceID: "dan-phone",
                                        markers: [.init(type: "arrival", recordedAt: time.addingTimeInterval(880), location: GeoJSONPoint(latitude: 47.84, longitude: 35.12))])
        var empty = completed
        empty.summary?.locations.coordinates = []
        empty.summary?.markers = []
        empty.metadata = [:]
        return [minimal, estimated, completed, empty]
    }

    @Test func theReactorsRequestsAreWrittenAsJSONEncoderWritesThem() throws {
        let point = GeoJSONPoint(latitude: 47.017966305682390, longitude: -30.013180201958327)
        let creations = [
            CreateTripParams(deviceID: "dan-phone", destination: .init(geometry: point)),
            CreateTripParams(deviceID: "dan \"phone\"", destination: .init(geometry: point, radius: 30.5, address: "Sobornyi Ave 1\n"),
                             metadata: ["order_id": .string("o1"), "leg": .string("pickup"), "n": .number(2)], idempotencyKey: "o1-pickup"),
        ]
        for creation in creations {
            #expect(String(decoding: creation.jsonBytes, as: UTF8.self) == String(decoding: try reference.encode(creation), as: UTF8.self))
        }
        let complete = TripIDParams(tripID: "t-\u{1}1")
        #expect(String(decoding: complete.jsonBytes, as: UTF8.self) == String(decoding: try reference.encode(complete), as: UTF8.self))
    }

    @Test func aCreatedReplyIsWrittenByHandAsJSONEncoderWritesIt() throws {
        for trip in Self.trips() {
            let replied = Replied(status: Status.created, body: trip)
            #expect((replied as Any) is any JSONWritable, "the hand-written path is taken")
            #expect(try JSONCoding.encode(replied) == Array(try reference.encode(replied)))
        }
    }

    @Test func tripsAreWrittenAsJSONEncoderWritesThem() throws {
        for trip in Self.trips() {
            let written = String(decoding: trip.jsonBytes, as: UTF8.self)
            let expected = String(decoding: try reference.encode(trip), as: UTF8.self)
            #expect(written == expected)
            #expect(try JSONCoding.decode(Trip.self, from: trip.jsonBytes) == trip, "and it decodes back")
        }
    }

    @Test func tripEventsAreWrittenAsJSONEncoderWritesThem() throws {
        for trip in Self.trips() {
            for value in ["created", "eta", "destination_arrival", "completed"] {
                let event = TripEvent(createdAt: Self.time, deviceID: trip.deviceID, data: .init(
                    value: value, tripID: trip.tripID, tripMetadata: trip.metadata, estimate: trip.estimate, summary: trip.summary,
                    arrivedAt: trip.destination.arrivedAt))
                let written = String(decoding: event.jsonBytes, as: UTF8.self)
                #expect(written == String(decoding: try reference.encode(event), as: UTF8.self))
                #expect(try JSONCoding.decode(TripEvent.self, from: event.jsonBytes) == event)
            }
        }
    }
}
