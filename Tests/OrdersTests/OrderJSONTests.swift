import Bus
import Foundation
import RideModels
import Testing

/// `Order`'s hand-written JSON against JSONEncoder with the platform's settings: the same bytes.
@Suite struct OrderJSONTests {
    let reference = JSONCoding.encoder()

    static let time = Date(timeIntervalSince1970: 1_790_000_000.123)

    static func orders() -> [Order] {
        let rider = User(id: "r1", role: .rider, name: "Zoë \"Q\" \\ Smith\n😀", phoneNumber: "+380501234567", createdAt: time)
        let driver = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+380671234567", deviceID: "dan-phone",
                          car: Car(model: "Prius </script>", licensePlate: "AB 1234"), createdAt: time.addingTimeInterval(0.5))
        let minimal = Order(id: "o1", status: .new, rider: rider, pickup: Place(latitude: 47, longitude: -35.5), dropoff: Place(latitude: 47.8404, longitude: 35.1226),
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
        completed.summary = TripSummary(locations: .init(coordinates: [[35.1, 47.8], [35.11, 47.81]]), distance: 5400, duration: 900,
                                        startedAt: time, completedAt: time.addingTimeInterval(900), deviceID: "dan-phone", markers: [])
        var rated = completed
        rated.surge = 1.5
        rated.fare?.surge = 1.5
        rated.ratingByRider = RatingGiven(stars: 5, comment: "Smooth \"ride\"", createdAt: time.addingTimeInterval(1000))
        rated.ratingByDriver = RatingGiven(stars: 4, createdAt: time.addingTimeInterval(1001))
        rated.rider.rating = UserRating(average: 4.67, count: 3)
        return [minimal, offered, completed, rated]
    }

    @Test func ordersAreWrittenAsJSONEncoderWritesThem() throws {
        for order in Self.orders() {
            let written = String(decoding: order.jsonBytes, as: UTF8.self)
            let expected = String(decoding: try reference.encode(order), as: UTF8.self)
            #expect(written == expected)
            #expect(try JSONCoding.decode(Order.self, from: order.jsonBytes) == order, "and it decodes back")
        }
    }
}
