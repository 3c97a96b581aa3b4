import Bus
import Foundation
import GRDB
import RideModels
import Storage
import Testing

@testable import UsersService

@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(rounds: 1000)

    @Test func aHashVerifiesItsPasswordOnly() throws {
        let stored = try hasher.hash("correct horse")
        #expect(stored.hasPrefix("pbkdf2-sha256$1000$"))
        #expect(!stored.contains("correct horse"))
        #expect(hasher.verify("correct horse", against: stored))
        #expect(!hasher.verify("correct horsE", against: stored))
        #expect(!hasher.verify("", against: stored))
    }

    @Test func saltsDifferAndRoundsTravelWithTheHash() throws {
        #expect(try hasher.hash("same password") != (try hasher.hash("same password")))
        let old = try PasswordHasher(rounds: 2000).hash("pw123456")
        #expect(hasher.verify("pw123456", against: old), "verifies with the rounds stored in the hash")
    }

    @Test func malformedStoredValuesNeverVerify() {
        for stored in ["", "plain", "pbkdf2-sha256$0$AA==$AA==", "pbkdf2-sha256$x$AA==$AA==", "md5$1$AA==$AA==", "pbkdf2-sha256$10$!!$AA=="] {
            #expect(!hasher.verify("anything", against: stored), "\(stored)")
        }
    }
}

@Suite struct TokenSignerTests {
    let signer = TokenSigner(secret: Array(repeating: 7, count: 32), lifetime: 3600)
    let user = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: Date(timeIntervalSince1970: 0))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aTokenSaysWhoAndUntilWhen() throws {
        let (token, expiresAt) = signer.issue(for: user, now: now)
        #expect(expiresAt == now.addingTimeInterval(3600))
        let claims = try signer.verify(token, now: now.addingTimeInterval(3599)).get()
        #expect(claims.sub == "r-1")
        #expect(claims.role == .rider)
        #expect(signer.verify(token, now: now.addingTimeInterval(3600)) == .failure(.expired))
    }

    @Test func tamperingAnotherKeyOrGarbageIsRefused() {
        let (token, _) = signer.issue(for: user, now: now)
        let parts = token.split(separator: ".")
        // Claims changed to another user, signature kept.
        let forged = Base64URL.encode(Array(#"{"exp":9999999999,"iat":0,"role":"driver","sub":"d-1"}"#.utf8)) + "." + parts[1]
        #expect(signer.verify(forged, now: now) == .failure(.badSignature))
        let otherKey = TokenSigner(secret: Array(repeating: 8, count: 32), lifetime: 3600)
        #expect(otherKey.verify(token, now: now) == .failure(.badSignature))
        for garbage in ["", ".", "abc", "a.b.c", "####.####", String(repeating: "A", count: 20_000) + ".AA"] {
            #expect(signer.verify(garbage, now: now) == .failure(.malformed), "\(garbage.prefix(20))")
        }
    }
}

@Suite struct UserRulesTests {
    func register(_ role: UserRole = .rider, name: String = "Ann", phone: String = "+380501234567", password: String = "secret123",
                  device: String? = nil, car: Car? = nil) -> RegisterParams {
        RegisterParams(role: role, name: name, phoneNumber: phone, password: password, deviceID: device, car: car)
    }

    @Test func goodRegistrations() {
        #expect(UserRules.problem(with: register()) == nil)
        #expect(UserRules.problem(with: register(.driver, device: "phone-1", car: Car(model: "Prius", licensePlate: "AB 1234"))) == nil)
    }

    @Test func eachBadFieldIsNamed() {
        let cases: [(RegisterParams, String)] = [
            (register(name: "  "), "name:"), (register(name: String(repeating: "x", count: 101)), "name:"), (register(name: "a\u{7}b"), "name:"),
            (register(phone: "0501234567"), "phone_number:"), (register(phone: "+0501234567"), "phone_number:"), (register(phone: "+12"), "phone_number:"),
            (register(phone: "+38050123456a"), "phone_number:"), (register(phone: "+３８０５０１２３４５６７"), "phone_number:"),
            (register(password: "short"), "password:"),
            (register(.driver, car: Car(model: "Prius", licensePlate: "AB 1234")), "device_id:"),
            (register(.driver, device: "phone-1"), "car:"),
            (register(.driver, device: "has space", car: Car(model: "Prius", licensePlate: "AB")), "device_id:"),
            (register(.driver, device: "p", car: Car(model: "", licensePlate: "AB")), "car.model:"),
        ]
        for (params, field) in cases {
            #expect(UserRules.problem(with: params)?.hasPrefix(field) == true, "\(params) → \(UserRules.problem(with: params) ?? "nil")")
        }
    }

    @Test func updatesAreCheckedToo() {
        #expect(UserRules.problem(with: UpdateUserParams(id: "r-1", name: "Bob"), role: .rider) == nil)
        #expect(UserRules.problem(with: UpdateUserParams(id: "r-1", car: Car(model: "X", licensePlate: "Y")), role: .rider) == "car: only drivers have a car")
        #expect(UserRules.problem(with: UpdateUserParams(id: "r-1", password: "1234"), role: .rider)?.hasPrefix("password:") == true)
    }
}

@Suite struct OutboxTests {
    func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try Outbox.createTable(db) }
        return queue
    }

    @Test func sequencesAreGapFreeAndPagesComeInOrder() throws {
        let db = try database()
        let sequences = try (1...5).map { n in try db.write { try Outbox.append($0, topic: "user.registered", type: "user.registered", data: ["n": n]) } }
        #expect(sequences == [1, 2, 3, 4, 5])
        let page = try db.read { try Outbox.page($0, source: "users", query: EventsQuery(after: 2, limit: 2)) }
        #expect(page.events.map(\.sequence) == [3, 4])
        #expect(page.lastSequence == 5)
        #expect(page.events[0].data == ["n": 3])
        #expect(page.events[0].source == "users")
    }

    @Test func aRolledBackChangeLeavesNoEventAndNoGap() throws {
        let db = try database()
        try db.write { try Outbox.append($0, topic: "a.b", type: "a.b", data: ["n": 1]) }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.write { db in
                try Outbox.append(db, topic: "a.b", type: "a.b", data: ["n": 2])
                throw Abort()
            }
        }
        #expect(try db.write { try Outbox.append($0, topic: "a.b", type: "a.b", data: ["n": 3]) } == 2)
    }

    @Test func publishedRowsAreMarkedAndTheRestWait() throws {
        let db = try database()
        for n in 1...3 { try db.write { try Outbox.append($0, topic: "a.b", type: "a.b", data: ["n": n]) } }
        try db.write { try Outbox.markPublished($0, through: 2) }
        #expect(try db.read { try Outbox.unpublished($0) }.map(\.sequence) == [3])
        let envelope = try db.read { try Outbox.unpublished($0) }[0].envelope(source: "users")
        let event = try CloudEvent<JSONValue>.decode(envelope)
        #expect(event.sequence == 3)
        #expect(event.source == "users")
    }

    @Test func badLimitsAreNamed() throws {
        let db = try database()
        #expect(throws: ServiceError.self) { try db.read { try Outbox.page($0, source: "users", query: EventsQuery(after: 0, limit: 0)) } }
    }
}

/// Ratings counted once per order and side (a replayed `order.rated` adds nothing); saved places.
@Suite struct UserStoreExtrasTests {
    @Test func ratingsCountOnceAndPlacesReplaceByLabel() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("users-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try UserStore(path: path)
        let time = Date(timeIntervalSince1970: 1_790_000_000)
        try await store.register(User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", createdAt: time), passwordHash: "x")
        #expect(try await store.user(id: "d1")?.rating == nil, "no rating before the first")
        func rated(_ order: String, _ stars: Int) -> OrderRated {
            OrderRated(orderID: order, raterID: "r1", raterRole: .rider, rateeID: "d1", rating: RatingGiven(stars: stars, createdAt: time))
        }
        #expect(try await store.record(rated("o1", 5)))
        #expect(!(try await store.record(rated("o1", 5))), "replayed")
        #expect(try await store.record(rated("o2", 4)))
        #expect(try await store.record(rated("o3", 4)))
        #expect(try await store.user(id: "d1")?.rating == UserRating(average: 4.33, count: 3))

        let home = SavedPlace(id: "pl-1", userID: "d1", label: .home, name: "home", place: Place(latitude: 47, longitude: 35), createdAt: time)
        #expect(try await store.save(home).id == "pl-1")
        var moved = home
        (moved.id, moved.place) = ("pl-2", Place(latitude: 48, longitude: 36))
        #expect(try await store.save(moved).id == "pl-1", "home again replaces, keeping its id")
        #expect(try await store.places(userID: "d1").map(\.place.latitude) == [48])
        await #expect(throws: UserStore.Failure.unknownUser) {
            try await store.save(SavedPlace(id: "pl-3", userID: "nobody", label: .work, name: "work", place: home.place, createdAt: time))
        }
        await #expect(throws: UserStore.Failure.unknownPlace) { try await store.deletePlace(userID: "someone-else", id: "pl-1") }
        try await store.deletePlace(userID: "d1", id: "pl-1")
        #expect(try await store.places(userID: "d1").isEmpty)
        #expect(UserRules.problem(with: SavePlaceParams(userID: "d1", label: .other, place: home.place)) == "name: required for a place labelled other")
    }
}
