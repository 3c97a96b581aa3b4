import Bus
import Foundation
import Logging
import Synchronization
import Testing
import Wire

/// Idempotency keys: which keys are valid, what a request's key is, and how the router answers a
/// keyed request again.
@Suite struct RequestKeyTests {
    @Test func aKeyIsOneTo255VisibleASCIICharacters() {
        for valid in ["a", "4f1c-9e2a", String(repeating: "k", count: 255), "!~"] { #expect(RequestKey.isValid(valid), "\(valid)") }
        for invalid in ["", String(repeating: "k", count: 256), "two words", "tab\there", "café", "new\nline", "\u{7F}"] {
            #expect(!RequestKey.isValid(invalid), "\(invalid)")
        }
    }

    func key(_ json: String, op: String = "create") throws -> RequestKey? {
        try RequestKey(op: op, json: Array(json.utf8))
    }

    @Test func theKeyIsScopedByTheCallerAndHashesTheRestOfTheParams() throws {
        let first = try #require(try key(#"{"caller":{"role":"rider","id":"r-1"},"request_id":"k1","text":"hi","n":1}"#))
        #expect(first.scope == "rider:r-1")
        #expect(first.key == "k1")
        #expect(first.hash.count == 64)
        // The members' order does not count; the key itself is not hashed.
        let reordered = try #require(try key(#"{"n":1,"text":"hi","request_id":"k2","caller":{"id":"r-1","role":"rider"}}"#))
        #expect(reordered.hash == first.hash)
        #expect(try key(#"{"caller":{"role":"rider","id":"r-1"},"request_id":"k1","text":"hello","n":1}"#)?.hash != first.hash)
        #expect(
            try key(#"{"caller":{"role":"rider","id":"r-1"},"request_id":"k1","text":"hi","n":1}"#, op: "send_message")?.hash != first.hash,
            "another op")
        #expect(try key(#"{"user_id":"d-2","request_id":"k"}"#)?.scope == "user:d-2")
        #expect(try key(#"{"request_id":"k"}"#)?.scope == "")
    }

    @Test func aStatedRequestHashStandsForTheParams() throws {
        let first = try #require(try key(#"{"request_id":"k","request_hash":"PUT /me {a}","batch_id":1,"at":"10:00"}"#))
        #expect(
            try key(#"{"request_id":"k","request_hash":"PUT /me {a}","batch_id":2,"at":"10:01"}"#)?.hash == first.hash,
            "values of the moment do not count")
        #expect(
            try key(#"{"request_id":"k","request_hash":"PUT /me {b}","batch_id":1,"at":"10:00"}"#)?.hash != first.hash, "another request")
        #expect(try key(#"{"request_id":"k","request_hash":"PUT /me {a}"}"#, op: "other")?.hash != first.hash, "another op")
        #expect(throws: ServiceError.self) { _ = try key(#"{"request_id":"k","request_hash":7}"#) }
        #expect(throws: ServiceError.self) { _ = try key(#"{"request_id":"k","request_hash":""}"#) }
    }

    @Test func paramsWithoutAKeyHaveNoneAndAMalformedKeyIsRefused() throws {
        #expect(try key(#"{"text":"request_id"}"#) == nil)
        #expect(try key("[1]") == nil)
        #expect(try key("not json request_id") == nil)
        #expect(throws: ServiceError.unprocessable("invalid_params", "request_id: must be a string of 1 to 255 visible ASCII characters")) {
            _ = try key(#"{"request_id":"has space"}"#)
        }
        #expect(throws: ServiceError.self) { _ = try key(#"{"request_id":7}"#) }
    }

    /// An in-memory log, as a service's `requests` table behaves.
    final class MemoryLog: RequestLog {
        let rows = Mutex<[String: (hash: String, reply: ServiceReply?)]>([:])
        func claim(_ key: RequestKey, now: Date) async throws -> RequestClaim {
            rows.withLock { rows in
                guard let row = rows[key.scope + "|" + key.key] else {
                    rows[key.scope + "|" + key.key] = (key.hash, nil)
                    return .first
                }
                guard row.hash == key.hash else { return .reused }
                return row.reply.map { RequestClaim.replay($0) } ?? .running
            }
        }
        func finish(_ key: RequestKey, reply: ServiceReply) async throws { rows.withLock { $0[key.scope + "|" + key.key]?.reply = reply } }
        func release(_ key: RequestKey) async throws { _ = rows.withLock { $0.removeValue(forKey: key.scope + "|" + key.key) } }
    }

    struct Text: Codable, Sendable { var text: String }

    final class Calls: Sendable {
        let runs = Atomic<Int>(0)
        let fails = Atomic<Bool>(true)
    }

    @Test func theRouterRunsAKeyedRequestOnceAndAnswersItsReplyAgain() async throws {
        let calls = Calls()
        var router = OpRouter(service: "test")
        router.on("book") { (params: Text, _) -> Replied<String> in
            Replied(status: Status.created, body: "\(params.text) #\(calls.runs.add(1, ordering: .relaxed).newValue)")
        }
        router.on("flaky") { (params: Text, _) -> String in
            if calls.fails.exchange(false, ordering: .relaxed) { throw ServiceError.conflict("not_yet", "not yet") }
            return params.text
        }
        router.requests = MemoryLog()
        let logger = Logger(label: "request-key-tests")
        func send(_ op: String, _ json: String) async -> ServiceReply {
            await router.reply(to: ServiceRequest(op: op, json: Array(json.utf8)), logger: logger)
        }
        let first = await send("book", #"{"text":"a","request_id":"k"}"#)
        #expect(first.status == 201)
        #expect(await send("book", #"{"request_id":"k","text":"a"}"#) == first)
        #expect(await send("book", #"{"text":"b","request_id":"k"}"#).serviceError?.code == "idempotency_key_reused")
        #expect(await send("book", #"{"text":"a"}"#).json != first.json, "no key: runs again")
        #expect(calls.runs.load(ordering: .relaxed) == 2)
        // A refusal is not remembered: the retry runs the op again.
        #expect(await send("flaky", #"{"text":"x","request_id":"f"}"#).status == 409)
        #expect(await send("flaky", #"{"text":"x","request_id":"f"}"#).status == 200)
        #expect(await send("book", #"{"text":"a","request_id":"bad key"}"#).status == 422)
    }
    /// A keyed call sent again while the first still runs (a resend after a broker was lost) gets
    /// the first's reply, not 409 `request_in_progress`, and the op runs once.
    @Test func aKeyedCallWhoseFirstAttemptStillRunsWaitsForItsReply() async throws {
        let calls = Calls()
        var router = OpRouter(service: "keyed")
        router.on("book") { (params: Text, _) -> String in
            let run = calls.runs.add(1, ordering: .relaxed).newValue
            try await Task.sleep(for: .milliseconds(600))
            return "\(params.text) #\(run)"
        }
        router.requests = MemoryLog()
        let logger = Logger(label: "request-key-tests")
        let broker = Broker(logger: logger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        let worker = MDPWorker(endpoint: endpoint, service: "keyed", logger: logger)
        let serving = Task { [router] in try await worker.run { await router.handle($0, logger: logger) } }
        let client = try await ServiceClient(broker: endpoint, logger: logger)
        // The client learns that the service echoes request ids: requests after this one go side by side.
        _ = try await client.call("keyed", "ping", NoParams(), as: PingReply.self)
        let book = Op<Text, String>("keyed", "book", "books once per key")
        async let first = client.call(book, Text(text: "a"), key: "k1")
        try await Task.sleep(for: .milliseconds(200))
        let second = try await client.call(book, Text(text: "a"), key: "k1")
        #expect(try await first == "a #1")
        #expect(second == "a #1", "the second attempt is answered with the first's reply")
        #expect(calls.runs.load(ordering: .relaxed) == 1)
        await client.close()
        worker.stop()
        try await serving.value
        broker.stop()
        await broker.join()
    }
}
