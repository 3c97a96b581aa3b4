import Bus
import Foundation
import Testing

@testable import OrdersService

/// The `requests` table (idempotency keys), the same on SQLite and PostgreSQL: the first claim
/// runs, a repeat answers the recorded reply, another request under the key is refused, keys are
/// scoped, forgotten after 24 hours, and a claim never answered is taken over after its lease.
@Suite struct RequestLogTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    func withLog(_ backend: Backend, _ body: (any RequestLog) async throws -> Void) async throws {
        try await withBackend(
            backend, sqlite: { try OrderStore(path: $0) }, postgres: { try await PostgresOrderStore.open(url: $0, logger: testLogger) }
        ) {
            (store: any OrderStorage) in
            try await body(store.requestLog)
        }
    }

    let key = RequestKey(scope: "rider:r-1", key: "k1", hash: String(repeating: "a", count: 64))
    let reply = ServiceReply(status: 201, json: Array(#"{"id":"o-1","text":"é \"quoted\""}"#.utf8))

    @Test(arguments: Backend.allCases)
    func aRepeatAnswersTheFirstReplyAndAnotherRequestIsRefused(backend: Backend) async throws {
        try await withLog(backend) { log in
            #expect(try await log.claim(key, now: Self.now) == .first)
            #expect(try await log.claim(key, now: Self.now) == .running, "the first attempt has not answered yet")
            try await log.finish(key, reply: reply)
            #expect(try await log.claim(key, now: Self.now.addingTimeInterval(5)) == .replay(reply))
            var other = key
            other.hash = String(repeating: "b", count: 64)
            #expect(try await log.claim(other, now: Self.now) == .reused)
            // Another caller's key of the same name is theirs.
            var theirs = other
            theirs.scope = "rider:r-2"
            #expect(try await log.claim(theirs, now: Self.now) == .first)
            // 24 hours on, the key is forgotten.
            #expect(try await log.claim(other, now: Self.now.addingTimeInterval(RequestKey.lifetime + 1)) == .first)
        }
    }

    /// A credential's reply (`OpRouter.replayWindows`) is answered again only within its window;
    /// after it the key runs again. A claim still running holds for its lease all the same.
    @Test(arguments: Backend.allCases)
    func aKeyKeptForLessIsForgottenAfterItsWindow(backend: Backend) async throws {
        try await withLog(backend) { log in
            var short = key
            short.kept = 10
            #expect(try await log.claim(short, now: Self.now) == .first)
            #expect(try await log.claim(short, now: Self.now.addingTimeInterval(30)) == .running, "its lease holds a running claim")
            try await log.finish(short, reply: reply)
            #expect(try await log.claim(short, now: Self.now.addingTimeInterval(5)) == .replay(reply))
            #expect(try await log.claim(short, now: Self.now.addingTimeInterval(11)) == .first, "forgotten after its window")
            var long = key
            long.scope = "rider:r-3"
            try #require(try await log.claim(long, now: Self.now) == .first)
            try await log.finish(long, reply: reply)
            #expect(try await log.claim(long, now: Self.now.addingTimeInterval(11)) == .replay(reply), "others keep theirs for a day")
        }
    }

    @Test(arguments: Backend.allCases)
    func aReleasedOrAbandonedClaimRunsAgain(backend: Backend) async throws {
        try await withLog(backend) { log in
            #expect(try await log.claim(key, now: Self.now) == .first)
            try await log.release(key)
            #expect(try await log.claim(key, now: Self.now) == .first, "a refusal is forgotten")
            #expect(try await log.claim(key, now: Self.now.addingTimeInterval(RequestKey.lease - 1)) == .running)
            #expect(
                try await log.claim(key, now: Self.now.addingTimeInterval(RequestKey.lease + 1)) == .first, "its process died: taken over")
            try await log.finish(key, reply: reply)
            try await log.release(key)
            #expect(
                try await log.claim(key, now: Self.now.addingTimeInterval(RequestKey.lease + 2)) == .replay(reply),
                "a recorded reply is not released")
        }
    }

    /// Instances racing with one key: exactly one runs it.
    @Test(arguments: Backend.allCases)
    func concurrentClaimsOfOneKeyLetOneRun(backend: Backend) async throws {
        try await withLog(backend) { log in
            let claims = try await withThrowingTaskGroup(of: RequestClaim.self) { group in
                for _ in 0..<8 { group.addTask { try await log.claim(key, now: Self.now) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(claims.filter { $0 == .first }.count == 1)
            #expect(claims.filter { $0 == .running }.count == 7)
        }
    }
}
