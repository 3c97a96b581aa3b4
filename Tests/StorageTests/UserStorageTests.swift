import Bus
import Foundation
import RideModels
import Storage
import Testing

@testable import UsersService

/// The users store's rules, the same on SQLite and PostgreSQL.
@Suite struct UserStorageTests {
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    /// The store on `backend`, closed (PostgreSQL) when `body` ends.
    func withStore(_ backend: Backend, _ body: (any UserStorage) async throws -> Void) async throws {
        try await withBackend(
            backend, sqlite: { try UserStore(path: $0) }, postgres: { try await PostgresUserStore.open(url: $0, logger: testLogger) }, body)
    }

    func driver(_ id: String, phone: String) -> User {
        User(
            id: id, role: .driver, name: "Dan", phoneNumber: phone, deviceID: "dev-\(id)",
            car: Car(model: "Skoda", licensePlate: "AA1234BB"), createdAt: time)
    }

    /// An operator's search: a part of the name (any case) or the phone number, or the whole id;
    /// by role and suspension; newest first; `%` and `_` are only characters.
    @Test(arguments: Backend.allCases)
    func peopleAreFoundByNamePhoneOrIDRoleAndSuspension(backend: Backend) async throws {
        try await withStore(backend) { store in
            var ann = User(id: "r1", role: .rider, name: "Ann 100% Smith", phoneNumber: "+15550201", createdAt: time)
            ann.createdAt = time.addingTimeInterval(60)
            try await store.register(ann, passwordHash: "h")
            try await store.register(driver("d1", phone: "+15550101"), passwordHash: "h")
            try await store.register(
                User(id: "d2", role: .driver, name: "Danielle", phoneNumber: "+15550102", createdAt: time.addingTimeInterval(30)),
                passwordHash: "h")
            func ids(_ params: SearchUsersParams) async throws -> [String] {
                try await store.users(matching: PeopleSearch(params)).map(\.id)
            }
            #expect(try await ids(SearchUsersParams()) == ["r1", "d2", "d1"], "newest first")
            #expect(try await ids(SearchUsersParams(query: "dan")) == ["d2", "d1"], "any case")
            #expect(try await ids(SearchUsersParams(query: "5550102")) == ["d2"])
            #expect(try await ids(SearchUsersParams(query: "r1")) == ["r1"], "the whole id")
            #expect(try await ids(SearchUsersParams(query: "100%")) == ["r1"])
            #expect(try await ids(SearchUsersParams(query: "%")) == ["r1"], "a % is a character, not everyone")
            #expect(try await ids(SearchUsersParams(query: "_")).isEmpty)
            #expect(try await ids(SearchUsersParams(role: .rider)) == ["r1"])
            #expect(try await ids(SearchUsersParams(limit: 1)) == ["r1"])
            _ = try await store.setSuspension(userID: "d1", reason: "documents", now: time)
            #expect(try await ids(SearchUsersParams(suspended: true)) == ["d1"])
            #expect(try await ids(SearchUsersParams(query: "dan", suspended: false)) == ["d2"])
        }
    }

    @Test(arguments: Backend.allCases)
    func registrationStoresTheUserAndItsEventOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.register(driver("d1", phone: "+15550101"), passwordHash: "hash-1") == 1)
            await #expect(throws: UserStoreFailure.phoneTaken) {
                try await store.register(driver("d2", phone: "+15550101"), passwordHash: "h")
            }
            #expect(try await store.user(id: "d2") == nil, "the refused registration left nothing")
            #expect(try await store.register(driver("d3", phone: "+15550103"), passwordHash: "hash-3") == 2, "no gap after a refusal")
            #expect(store.count == 2)
            let (user, hash) = try #require(try await store.credentials(phoneNumber: "+15550101"))
            #expect(user == driver("d1", phone: "+15550101"))
            #expect(hash == "hash-1")
            #expect(try await store.credentials(phoneNumber: "+19999999") == nil)
            let events = try await store.eventLog.page(source: "users", query: EventsQuery(after: 0, limit: 10)).events
            #expect(events.map(\.type) == ["user.registered", "user.registered"])
            #expect(events[1].data["user"]?["id"] == "d3")
        }
    }

    @Test(arguments: Backend.allCases)
    func updatesChangeOnlyWhatIsGivenAndKeepPhonesUnique(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.register(driver("d1", phone: "+15550101"), passwordHash: "old")
            try await store.register(driver("d2", phone: "+15550102"), passwordHash: "x")
            let later = time.addingTimeInterval(60)
            let renamed = try await store.update(UpdateUserParams(id: "d1", name: "Daniel"), passwordHash: nil, now: later)
            #expect(renamed.name == "Daniel")
            #expect(renamed.car == Car(model: "Skoda", licensePlate: "AA1234BB"))
            #expect(try await store.credentials(phoneNumber: "+15550101")?.1 == "old", "the password kept when none is given")
            _ = try await store.update(UpdateUserParams(id: "d1", phoneNumber: "+15550111"), passwordHash: "new", now: later)
            #expect(try await store.credentials(phoneNumber: "+15550111")?.1 == "new")
            await #expect(throws: UserStoreFailure.phoneTaken) {
                try await store.update(UpdateUserParams(id: "d1", phoneNumber: "+15550102"), passwordHash: nil, now: later)
            }
            #expect(try await store.user(id: "d1")?.phoneNumber == "+15550111", "the refused change left the user as it was")
            // A device is one account's: at registration and on a change.
            var third = driver("d3", phone: "+15550103")
            third.deviceID = "dev-d2"
            await #expect(throws: UserStoreFailure.deviceTaken) { try await store.register(third, passwordHash: "h") }
            #expect(try await store.user(id: "d3") == nil)
            await #expect(throws: UserStoreFailure.deviceTaken) {
                try await store.update(UpdateUserParams(id: "d1", deviceID: "dev-d2"), passwordHash: nil, now: later)
            }
            #expect(try await store.user(id: "d1")?.deviceID == "dev-d1")
            #expect(
                try await store.update(UpdateUserParams(id: "d1", deviceID: "dev-d1"), passwordHash: nil, now: later).deviceID == "dev-d1",
                "its own again")
            await #expect(throws: UserStoreFailure.unknownUser) {
                try await store.update(UpdateUserParams(id: "nobody", name: "X"), passwordHash: nil, now: later)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func ratingsAndCancelsCountOnceAndPlacesReplaceByLabel(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.register(
                User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", createdAt: time), passwordHash: "x")
            #expect(try await store.user(id: "d1")?.rating == nil, "no rating before the first")
            func rated(_ order: String, _ stars: Int) -> OrderRated {
                OrderRated(
                    orderID: order, raterID: "r1", raterRole: .rider, rateeID: "d1", rating: RatingGiven(stars: stars, createdAt: time))
            }
            #expect(try await store.record(rated("o1", 5)))
            #expect(!(try await store.record(rated("o1", 5))), "replayed")
            #expect(try await store.record(rated("o2", 4)))
            #expect(try await store.record(rated("o3", 4)))
            #expect(try await store.user(id: "d1")?.rating == UserRating(average: 4.33, count: 3))

            #expect(try await store.user(id: "d1")?.cancellations == nil, "no cancellations before the first")
            let cancel = DriverCancelled(orderID: "o4", driverID: "d1", redispatch: 1, cancelledAt: time)
            #expect(try await store.record(cancel))
            #expect(!(try await store.record(cancel)), "replayed")
            #expect(
                try await store.record(DriverCancelled(orderID: "o4", driverID: "d1", redispatch: 2, cancelledAt: time)),
                "the same order again, later")
            #expect(try await store.user(id: "d1")?.cancellations == 2)

            let home = SavedPlace(
                id: "pl-1", userID: "d1", label: .home, name: "home", place: Place(latitude: 47, longitude: 35), createdAt: time)
            #expect(try await store.save(home).id == "pl-1")
            var moved = home
            (moved.id, moved.place) = ("pl-2", Place(latitude: 48, longitude: 36))
            #expect(try await store.save(moved).id == "pl-1", "home again replaces, keeping its id")
            #expect(try await store.places(userID: "d1").map(\.place.latitude) == [48])
            await #expect(throws: UserStoreFailure.unknownUser) {
                try await store.save(
                    SavedPlace(id: "pl-3", userID: "nobody", label: .work, name: "work", place: home.place, createdAt: time))
            }
            await #expect(throws: UserStoreFailure.unknownPlace) { try await store.deletePlace(userID: "someone-else", id: "pl-1") }
            try await store.deletePlace(userID: "d1", id: "pl-1")
            #expect(try await store.places(userID: "d1").isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func aUserMaySaveFiftyPlaces(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.register(
                User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550201", createdAt: time), passwordHash: "x")
            for n in 0..<UserStorageRules.placesPerUser {
                _ = try await store.save(
                    SavedPlace(
                        id: "p\(n)", userID: "r1", label: .other, name: "place \(n)", place: Place(latitude: 47, longitude: 35),
                        createdAt: time.addingTimeInterval(Double(n))))
            }
            await #expect(throws: UserStoreFailure.tooManyPlaces(50)) {
                try await store.save(
                    SavedPlace(
                        id: "p50", userID: "r1", label: .other, name: "one more", place: Place(latitude: 47, longitude: 35), createdAt: time
                    ))
            }
            #expect(try await store.places(userID: "r1").first?.id == "p0", "oldest first")
        }
    }

    /// PostgreSQL's text cannot hold NUL (SQLite's can): bad input answered 422, nothing stored — not a 500.
    @Test func aNulInTextIsBadInputOnPostgreSQL() async throws {
        try await withStore(.postgres) { store in
            do {
                try await store.register(
                    User(id: "r1", role: .rider, name: "A\u{0}B", phoneNumber: "+15550101", createdAt: time), passwordHash: "x")
                Issue.record("stored a NUL")
            } catch let error as any ServiceErrorConvertible {
                #expect(error.serviceError?.status == 422, "\(String(describing: error.serviceError))")
            }
            #expect(try await store.user(id: "r1") == nil)
            #expect(try await store.eventLog.page(source: "users", query: EventsQuery(after: 0, limit: 10)).events.isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func reactorCursorsAreKeptPerSource(backend: Backend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.reactorCursor(source: "orders") == 0)
            try await store.saveReactorCursor(source: "orders", sequence: 41)
            try await store.saveReactorCursor(source: "orders", sequence: 42)
            try await store.saveReactorCursor(source: "trips", sequence: 7)
            #expect(try await store.reactorCursor(source: "orders") == 42)
            #expect(try await store.reactorCursor(source: "trips") == 7)
        }
    }
}

extension PostgresUserStore: PostgresBacked {}
