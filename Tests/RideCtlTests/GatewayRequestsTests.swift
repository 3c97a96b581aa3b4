import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import RideModels
import Synchronization
import Testing
import Wire

@testable import RideCtlKit

/// What the simulated apps send again, against a real HTTP server answering as the gateway (or a
/// proxy in front of it) does: only what stored nothing, or what cannot happen twice.
@Suite struct GatewayRequestsTests {
    /// Each path answers its statuses in turn (the last one from then on) and counts its requests.
    final class Script: Sendable {
        let answers: [String: [(Int, String, [String: String])]]
        let hits = Mutex<[String: Int]>([:])
        init(_ answers: [String: [(Int, String, [String: String])]]) { self.answers = answers }
        func hits(_ path: String) -> Int { hits.withLock { $0[path] ?? 0 } }
    }

    static let unavailable = #"{"error":{"code":"unavailable","message":"no reply"}}"#
    static let storage = #"{"error":{"code":"storage_unavailable","message":"the database is away"}}"#
    static let limited = #"{"error":{"code":"too_many_attempts","message":"slow down"}}"#

    func withServer(_ script: Script, _ body: @escaping @Sendable (GatewayRequests) async throws -> Void) async throws {
        let router = Router()
        router.on("{path}", method: .post) { _, context in try Self.answer(script, context) }
        router.on("{path}", method: .get) { _, context in try Self.answer(script, context) }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "fake-gateway")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            defer { group.cancelAll() }
            try await body(GatewayRequests(http: http, base: "http://127.0.0.1:\(port)"))
        }
        try await http.shutdown()
    }

    static func answer(_ script: Script, _ context: BasicRequestContext) throws -> Response {
        let path = try context.parameters.require("path")
        let hit = script.hits.withLock { hits -> Int in
            hits[path, default: 0] += 1
            return hits[path]!
        }
        let answers = script.answers[path] ?? [(404, "{}", [:])]
        let (status, body, headers) = answers[min(hit, answers.count) - 1]
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.retryAfter] = headers["Retry-After"]
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    @Test func aLimitedRequestIsSentAgainAfterItsRetryAfter() async throws {
        let script = Script(["users": [(429, Self.limited, ["Retry-After": "1"]), (201, #"{"id":"r-1"}"#, [:])]])
        try await withServer(script) { requests in
            let started = ContinuousClock.now
            let reply = try await requests.send("POST", "/users", body: Array("{}".utf8))
            #expect(String(decoding: reply, as: UTF8.self) == #"{"id":"r-1"}"#)
            #expect(ContinuousClock.now - started >= .seconds(1), "it waited the Retry-After")
        }
        #expect(script.hits("users") == 2)
    }

    @Test func aChangeThatMayHaveBeenServedIsSentOnceUnlessKeyed() async throws {
        let script = Script([
            "accept": [(503, Self.unavailable, [:]), (200, "{}", [:])],
            "messages": [(503, Self.unavailable, [:]), (201, "{}", [:])],
            "end": [(502, "<html>bad gateway</html>", [:]), (200, "{}", [:])],
        ])
        try await withServer(script) { requests in
            await #expect(throws: GatewayRequests.Failure.self) { try await requests.send("POST", "/accept") }
            await #expect(throws: GatewayRequests.Failure.self) { try await requests.send("POST", "/end") }
            _ = try await requests.send("POST", "/messages", body: Array("{}".utf8), key: "say-1")
        }
        #expect(script.hits("accept") == 1 && script.hits("end") == 1, "not sent again: it may have been served")
        #expect(script.hits("messages") == 2, "keyed: sent again")
    }

    @Test func whatStoredNothingIsSentAgainAndWhatIsRefusedIsNot() async throws {
        let script = Script([
            "start": [(503, Self.storage, [:]), (503, "<html>no server is available</html>", [:]), (200, "{}", [:])],
            "orders": [(502, "", [:]), (200, #"{"orders":[]}"#, [:])],
            "cancel": [(409, #"{"error":{"code":"conflict","message":"the ride started"}}"#, [:])],
        ])
        try await withServer(script) { requests in
            _ = try await requests.send("POST", "/start")
            _ = try await requests.send("GET", "/orders")
            let refusal = await #expect(throws: GatewayRequests.Failure.self) { try await requests.send("POST", "/cancel") }
            #expect(
                refusal?.description.contains("409") == true && refusal?.description.contains("the ride started") == true,
                "\(String(describing: refusal))")
        }
        #expect(script.hits("start") == 3 && script.hits("orders") == 2 && script.hits("cancel") == 1)
    }

    @Test func aKeyedRequestStillBeingAnsweredIsAskedAgainForItsReply() async throws {
        let inProgress = #"{"error":{"code":"request_in_progress","message":"still being answered"}}"#
        let script = Script([
            "users": [(504, "", [:]), (409, inProgress, [:]), (409, inProgress, [:]), (201, #"{"id":"r-1"}"#, [:])],
            "plain": [(409, inProgress, [:]), (200, "{}", [:])],
        ])
        try await withServer(script) { requests in
            let reply = try await requests.send("POST", "/users", body: Array("{}".utf8), key: "sign-up-1")
            #expect(String(decoding: reply, as: UTF8.self) == #"{"id":"r-1"}"#)
            await #expect(throws: GatewayRequests.Failure.self) { try await requests.send("POST", "/plain") }
        }
        #expect(script.hits("users") == 4, "the 409s do not count as attempts: the first try is still under way")
        #expect(script.hits("plain") == 1, "without a key a 409 is an answer")
    }

    @Test func aRideUpdateIsAStatusOfTheFollowedOrderOnly() throws {
        let rider = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: Date(timeIntervalSince1970: 0))
        let order = try JSONValue(
            encoding: Order(
                id: "o-1", status: .pickingUp, rider: rider, pickup: Place(latitude: 0, longitude: 0),
                dropoff: Place(latitude: 0, longitude: 1),
                createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0)))
        func update(_ message: JSONValue, _ orderID: String) throws -> (RideUpdate, sequence: UInt64)? {
            LiveRides.update(try JSONCoding.encodeText(message), orderID: orderID)
        }
        #expect(try update(["type": "status", "sequence": 7, "order": order], "o-1")?.sequence == 7)
        #expect(try update(["type": "snapshot", "sequence": 7, "order": order], "o-1") != nil)
        #expect(try update(["type": "status", "sequence": 7, "order": order], "o-2") == nil, "another order's")
        #expect(try update(["type": "location", "order_id": "o-1"], "o-1") == nil)
        #expect(try update(["type": "status", "order": ["id": "o-1"]], "o-1") == nil, "not an order")
    }
}
