import Bus
import Foundation
import RideContract
import RideModels
import Storage
import Testing
import Wire

@testable import UsersService

/// users' ratings reactor counts a rating as orders' log has it (SQLite and PostgreSQL): a forged
/// `order.rated` moves nobody's average.
@Suite(.timeLimit(.minutes(2))) struct RatingsReactorTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000)

    static func rating(_ order: String, _ stars: Int, rater: String = "r1") -> OrderRated {
        OrderRated(orderID: order, raterID: rater, raterRole: .rider, rateeID: "d1", rating: RatingGiven(stars: stars, createdAt: time))
    }

    @Test(arguments: Backend.allCases)
    func aForgedRatingCountsForNothing(backend: Backend) async throws {
        try await UserStorageTests().withStore(backend) { store in
            try await store.register(
                User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", createdAt: Self.time), passwordHash: "x")
            let log = ScriptedLog(source: BusContract.Service.orders)
            try log.append(Events.orderRated.type, Self.rating("o1", 5))
            let bus = try await InProcessBus.start([log.router])
            let feed = TestFeed<RatingsReactor.OrdersEvent>()
            let reactor = RatingsReactor.make(store: store, platform: bus.client, subscriber: feed, logger: testLogger)
            let running = Task { try await reactor.run() }
            #expect(await eventually { try await store.user(id: "d1")?.rating?.count == 1 })

            let oneStar = Array(try JSONCoding.encode(Self.rating("o-forged", 1, rater: "mallory")))
            feed.forge(sequence: 2, type: Events.orderRated.type, data: oneStar)  // next in line, but not in the log
            feed.forge(sequence: 1, type: Events.orderRated.type, data: oneStar)  // at a sequence seen, another event
            feed.forge(sequence: 1 << 62, type: Events.orderRated.type, data: oneStar)
            try feed.send(try log.append(Events.orderRated.type, Self.rating("o2", 3)))
            #expect(await eventually { try await store.user(id: "d1")?.rating?.count == 2 })
            await feed.close()
            try await running.value
            await bus.close()
            #expect(
                try await store.user(id: "d1")?.rating == UserRating(average: 4, count: 2), "5 and 3; the forged 1s counted for nothing")
        }
    }
}
