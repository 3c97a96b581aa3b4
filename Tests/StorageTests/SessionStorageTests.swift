import Foundation
import RideModels
import Testing

@testable import UsersService

/// Sessions and their refresh tokens, the same on SQLite and PostgreSQL.
@Suite struct SessionStorageTests {
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    func withStore(_ backend: Backend, _ body: (any UserStorage) async throws -> Void) async throws {
        try await withBackend(
            backend, sqlite: { try UserStore(path: $0) }, postgres: { try await PostgresUserStore.open(url: $0, logger: testLogger) }, body)
    }

    func session(_ id: String, user: String = "r1", hash: String) -> SessionRecord {
        SessionRecord(id: id, userID: user, refreshHash: hash, createdAt: time, expiresAt: time.addingTimeInterval(3600))
    }

    @Test(arguments: Backend.allCases)
    func aRefreshTokenRotatesOnceAndItsReuseRevokesTheSession(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.createSession(session("s1", hash: "h1"))
            #expect(try await store.sessionIsActive("s1"))
            #expect(try await !store.sessionIsActive("s-unknown"))
            let later = time.addingTimeInterval(60)
            let expiry = later.addingTimeInterval(3600)
            #expect(
                try await store.rotateSession("s1", presentedHash: "h1", nextHash: "h2", now: later, expiresAt: expiry)
                    == .rotated(userID: "r1"))
            // The log-in's time, which re-authentication reads, stays the log-in's through refreshes;
            // another user's session id tells nothing.
            #expect(try await store.loggedIn(session: "s1", user: "r1") == time)
            #expect(try await store.loggedIn(session: "s1", user: "r2") == nil)
            // A token the session never gave (its id read from an access token, a made-up secret)
            // is refused and the session goes on; only the token the rotation replaced is a reuse.
            #expect(try await store.rotateSession("s1", presentedHash: "made-up", nextHash: "h9", now: later, expiresAt: expiry) == .forged)
            #expect(try await store.sessionIsActive("s1"))
            #expect(try await store.rotateSession("s1", presentedHash: "h1", nextHash: "h3", now: later, expiresAt: expiry) == .reused)
            #expect(try await !store.sessionIsActive("s1"), "a rotated token used again revokes the session")
            #expect(try await store.loggedIn(session: "s1", user: "r1") == nil, "a revoked session proves nothing")
            #expect(try await store.rotateSession("s1", presentedHash: "h2", nextHash: "h4", now: later, expiresAt: expiry) == .revoked)
            #expect(try await store.rotateSession("s9", presentedHash: "h1", nextHash: "h2", now: later, expiresAt: expiry) == .unknown)
            let tooLate = time.addingTimeInterval(7200)
            try await store.createSession(session("s2", hash: "h1"))
            #expect(try await store.rotateSession("s2", presentedHash: "h1", nextHash: "h2", now: tooLate, expiresAt: expiry) == .expired)
        }
    }

    @Test(arguments: Backend.allCases)
    func logOutRevokesOneSessionAndANewPasswordEveryOne(backend: Backend) async throws {
        try await withStore(backend) { store in
            let user = User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550101", createdAt: time)
            try await store.register(user, passwordHash: "old")
            for id in ["s1", "s2", "s3"] { try await store.createSession(session(id, hash: "h-\(id)")) }
            try await store.createSession(session("s4", user: "r2", hash: "h-s4"))
            #expect(try await store.revokeSession("s1", now: time))
            #expect(try await !store.revokeSession("s1", now: time), "once")
            #expect(try await !store.sessionIsActive("s1"))
            #expect(try await store.sessionIsActive("s2"))
            _ = try await store.update(UpdateUserParams(id: "r1", name: "Anna"), passwordHash: nil, now: time)
            #expect(try await store.sessionIsActive("s2"), "a change without a password keeps the sessions")
            _ = try await store.update(UpdateUserParams(id: "r1", password: "new-password"), passwordHash: "new", now: time)
            #expect(try await !store.sessionIsActive("s2"))
            #expect(try await !store.sessionIsActive("s3"))
            #expect(try await store.sessionIsActive("s4"), "another user's session stays")
        }
    }
}
