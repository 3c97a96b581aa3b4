import Foundation
import RideModels
import Storage
import Testing

@testable import UsersService

/// Photos by content hash, the same on SQLite (a BLOB) and PostgreSQL (a BYTEA).
@Suite struct PhotoStorageTests {
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    func photo(_ byte: UInt8) -> StoredPhoto {
        StoredPhoto(
            sha256: String(repeating: String(format: "%02x", byte), count: 32), contentType: "image/png", width: 4, height: 3,
            bytes: Data([0x89, byte, 0, 255]))
    }

    @Test(arguments: Backend.allCases)
    func aPhotoIsStoredOnceByItsHashAndTheUserPointsAtIt(backend: Backend) async throws {
        try await UserStorageTests().withStore(backend) { store in
            let car = Car(model: "Skoda", licensePlate: "AA1234BB")
            try await store.register(
                User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", deviceID: "dev-1", car: car, createdAt: time),
                passwordHash: "h")
            try await store.register(
                User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550102", createdAt: time), passwordHash: "h")
            let (face, skoda) = (photo(0xAB), photo(0xCD))
            let withFace = try await store.setPhoto(face, userID: "d1", kind: .profile, now: time, keepReplaced: 0)
            #expect(withFace.photoURL == PhotoRules.path(sha256: face.sha256) && withFace.car?.photoURL == nil)
            let withCar = try await store.setPhoto(skoda, userID: "d1", kind: .car, now: time, keepReplaced: 0)
            #expect(withCar.car?.photoURL == PhotoRules.path(sha256: skoda.sha256) && withCar.photoURL == withFace.photoURL)
            // The same bytes as another's photo: one row, both point at it.
            #expect(try await store.setPhoto(face, userID: "r1", kind: .profile, now: time, keepReplaced: 0).photoURL == withFace.photoURL)
            #expect(try await store.photo(sha256: face.sha256) == face)
            #expect(try await store.photo(sha256: String(repeating: "0", count: 64)) == nil)
            #expect(try await store.user(id: "d1") == withCar, "read back as answered")
            // A new car keeps its photo (put_photo changes it, not update); a rider has no car to photograph.
            let recar = try await store.update(
                UpdateUserParams(id: "d1", car: Car(model: "Octavia", licensePlate: "AA1234BB")), passwordHash: nil, now: time)
            #expect(recar.car?.photoURL == withCar.car?.photoURL)
            await #expect(throws: UserStoreFailure.noCar) {
                try await store.setPhoto(skoda, userID: "r1", kind: .car, now: time, keepReplaced: 0)
            }
            await #expect(throws: UserStoreFailure.unknownUser) {
                try await store.setPhoto(skoda, userID: "nobody", kind: .profile, now: time, keepReplaced: 0)
            }
            #expect(try await store.user(id: "r1")?.car == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func aReplacedPhotoIsKeptItsTimeThenDeletedUnlessSomeoneStillUsesIt(backend: Backend) async throws {
        try await UserStorageTests().withStore(backend) { store in
            try await store.register(
                User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550102", createdAt: time), passwordHash: "h")
            try await store.register(
                User(id: "r2", role: .rider, name: "Bob", phoneNumber: "+15550103", createdAt: time), passwordHash: "h")
            let (first, second, third) = (photo(0x01), photo(0x02), photo(0x03))
            let day: TimeInterval = 86_400
            _ = try await store.setPhoto(first, userID: "r1", kind: .profile, now: time, keepReplaced: day)
            _ = try await store.setPhoto(second, userID: "r1", kind: .profile, now: time, keepReplaced: day)
            #expect(try await store.photo(sha256: first.sha256) == first, "kept for its day: a report may show it")
            // A day later any upload sweeps it; one someone points at again is not swept.
            _ = try await store.setPhoto(second, userID: "r2", kind: .profile, now: time + day, keepReplaced: day)
            #expect(try await store.photo(sha256: first.sha256) == nil, "deleted once its time is up")
            _ = try await store.setPhoto(third, userID: "r1", kind: .profile, now: time + day, keepReplaced: day)
            #expect(try await store.photo(sha256: second.sha256) == second, "Bob still uses it")
            _ = try await store.setPhoto(first, userID: "r2", kind: .profile, now: time + 2 * day, keepReplaced: day)
            _ = try await store.setPhoto(third, userID: "r2", kind: .profile, now: time + 4 * day, keepReplaced: day)
            let (secondLeft, firstLeft) = (try await store.photo(sha256: second.sha256), try await store.photo(sha256: first.sha256))
            #expect(secondLeft == nil && firstLeft == first)
            #expect(try await store.photo(sha256: third.sha256) == third)
        }
    }
}
