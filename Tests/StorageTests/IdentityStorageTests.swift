import Foundation
import RideModels
import Testing

@testable import UsersService

/// Social sign-in's identities, the same on SQLite and PostgreSQL.
@Suite struct IdentityStorageTests {
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    func withStore(_ backend: Backend, _ body: (any UserStorage) async throws -> Void) async throws {
        try await withBackend(
            backend, sqlite: { try UserStore(path: $0) }, postgres: { try await PostgresUserStore.open(url: $0, logger: testLogger) }, body)
    }

    func identity(_ provider: IdentityProvider, _ subject: String, user: String) -> LinkedIdentity {
        LinkedIdentity(provider: provider, subject: subject, userID: user, createdAt: time)
    }

    @Test(arguments: Backend.allCases)
    func anIdentityMakesOneAccountWithoutPhoneOrPassword(backend: Backend) async throws {
        try await withStore(backend) { store in
            let ann = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "", createdAt: time)
            let bo = User(id: "r-2", role: .rider, name: "Bo", phoneNumber: "", createdAt: time)
            try await store.register(ann, identity: identity(.google, "g-1", user: ann.id))
            // Two accounts without a phone number: the placeholder keeps the column unique.
            try await store.register(bo, identity: identity(.facebook, "g-1", user: bo.id))
            #expect(try await store.user(identity: .google, subject: "g-1") == ann)
            #expect(try await store.user(identity: .facebook, subject: "g-1") == bo)
            #expect(try await store.user(identity: .apple, subject: "g-1") == nil)
            #expect(store.count == 2)
            await #expect(throws: UserStoreFailure.identityTaken) {
                try await store.register(
                    User(id: "r-3", role: .rider, name: "Cy", phoneNumber: "", createdAt: time),
                    identity: identity(.google, "g-1", user: "r-3"))
            }
            #expect(try await store.user(id: "r-3") == nil, "nothing of the refused account is stored")
            #expect(
                try await store.credentials(phoneNumber: "identity:google:g-1").map {
                    PasswordHasher(rounds: 1000).verify("", against: $0.1)
                } == false)

            // A profile change keeps the stored placeholder; a phone number given is kept.
            let renamed = try await store.update(UpdateUserParams(id: ann.id, name: "Ann B."), passwordHash: nil, now: time)
            #expect(renamed.phoneNumber == "" && renamed.name == "Ann B.")
            #expect(
                try await store.update(UpdateUserParams(id: bo.id, phoneNumber: "+380501110070"), passwordHash: nil, now: time).phoneNumber
                    == "+380501110070")
            #expect(try await store.user(identity: .facebook, subject: "g-1")?.phoneNumber == "+380501110070")
        }
    }

    @Test(arguments: Backend.allCases)
    func anIdentityLinksToOneAccount(backend: Backend) async throws {
        try await withStore(backend) { store in
            let ann = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "+380501110071", createdAt: time)
            try await store.register(ann, passwordHash: "x")
            let linked = identity(.apple, "a-1", user: ann.id)
            #expect(try await store.link(linked) == linked)
            #expect(try await store.link(identity(.apple, "a-1", user: ann.id)).userID == ann.id, "linking again answers the link")
            #expect(try await store.user(identity: .apple, subject: "a-1")?.id == ann.id)
            await #expect(throws: UserStoreFailure.identityTaken) { try await store.link(identity(.apple, "a-1", user: "r-other")) }
            await #expect(throws: UserStoreFailure.unknownUser) { try await store.link(identity(.google, "g-7", user: "r-nobody")) }
        }
    }
}
