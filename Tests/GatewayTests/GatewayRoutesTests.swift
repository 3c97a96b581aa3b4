import Bus
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceKit
import Testing
import Wire

@testable import GatewayService

/// The gateway's routes without the platform behind them: what is answered before any service is asked.
@Suite struct GatewayRoutesTests {
    /// The gateway's application on a bus nobody answers (every request here is settled before a call).
    static func application() async throws -> (GatewayApplication, Application<RouterResponder<GatewayContext>>, @Sendable () async -> Void)
    {
        var options = MDPClient.Options()
        options.timeout = .milliseconds(200)
        options.attempts = 1
        let (gateway, close) = try await GatewayAPI.offline(options)
        let app = Application(
            router: gateway.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Logger(label: "test"))
        return (gateway, app, close)
    }

    /// `/openapi.json` is built from the routes as registered: every one is there with its
    /// security, and what it says of bodies, parameters and replies comes from the wire types.
    @Test func theOpenAPIDocumentDescribesEveryRouteFromItsTypes() async throws {
        let (gateway, app, close) = try await Self.application()
        let served = try await app.test(.router) { client in
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                return try JSONCoding.decode(JSONValue.self, from: Array(response.body.readableBytesView))
            }
        }
        await close()
        #expect(served["openapi"] == "3.1.0")
        #expect(served["info"]?["version"] == .string(PlatformVersion.current))
        var documented: [String] = []
        for (path, item) in served["paths"]?.objectValue ?? [:] {
            for method in (item.objectValue ?? [:]).keys { documented.append("\(method.uppercased()) \(path)") }
        }
        #expect(documented.sorted() == gateway.registry.routes.sorted(), "documented vs registered")
        #expect(documented.contains("GET /v1/orders/{id}/live") && documented.contains("POST /trips") && documented.count >= 35)

        let paths = try #require(served["paths"])
        // Order's schema is Order's members, all of them (a hand-written copy once lacked these).
        let order = try #require(served["components"]?["schemas"]?["Order"]?["properties"]?.objectValue)
        for key in ["declined_by", "offer_history", "dispatch_round", "offered_at", "status", "fare"] {
            #expect(order[key] != nil, "Order.\(key)")
        }
        // A booking's body is the op's params less what the gateway fills in (the caller).
        let booking = try #require(
            paths["/v1/orders"]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"]?["properties"]?.objectValue)
        #expect(Set(booking.keys) == ["pickup", "dropoff", "pickup_place_id", "dropoff_place_id"])
        #expect(
            paths["/v1/orders"]?["post"]?["responses"]?["201"]?["content"]?["application/json"]?["schema"]?["$ref"]
                == "#/components/schemas/Order")
        #expect(paths["/v1/orders"]?["post"]?["security"] == [["bearer": []]])
        #expect(paths["/v1/users"]?["post"]?["security"] == [])
        #expect(paths["/trips"]?["post"]?["security"] == [["basic": []]])
        // A query parameter states the limits its param's `@WireField` states.
        let limit = try #require(paths["/v1/me/history"]?["get"]?["parameters"]?.arrayValue?.first { $0["name"] == "limit" })
        #expect(limit["in"] == "query" && limit["schema"]?["minimum"] == 1 && limit["schema"]?["maximum"] == 100)
        let password = try #require(served["components"]?["schemas"]?["Car"])
        #expect(password["properties"]?["license_plate"]?["maxLength"] == 20)
        // Errors are documented per route by what it can answer.
        let accept = try #require(paths["/v1/orders/{id}/accept"]?["post"]?["responses"]?.objectValue)
        #expect(
            Set(accept.keys) == ["200", "400", "401", "403", "404", "409", "422", "429", "503"],
            "with the Idempotency-Key's 400, 409 and 422, the token's 429")
        // 429 wherever a limit counts: every bearer route, sign-up and log-in; not HyperTrack's.
        for (path, method) in [("/v1/users", "post"), ("/v1/sessions", "post"), ("/v1/me", "get"), ("/v1/orders/{id}/live", "get")] {
            #expect(paths[path]?[method]?["responses"]?["429"] != nil, "\(method) \(path)")
        }
        #expect(paths["/trips"]?["post"]?["responses"]?["429"] == nil)
        // Every POST, PUT, PATCH and DELETE takes an Idempotency-Key; reads do not.
        func keyed(_ path: String, _ method: String) -> Bool {
            paths[path]?[method]?["parameters"]?.arrayValue?.contains { $0["name"] == "Idempotency-Key" && $0["in"] == "header" } == true
        }
        for (path, method) in [
            ("/v1/orders", "post"), ("/v1/orders/{id}/cancel", "post"), ("/v1/users", "post"), ("/v1/me/availability", "put"),
            ("/trips", "post"),
        ] {
            #expect(keyed(path, method), "\(method) \(path)")
        }
        #expect(!keyed("/v1/orders", "get") && !keyed("/trips/{trip_id}", "get"))
        #expect(paths["/v1/orders"]?["post"]?["x-field-rules"] != nil, "rules between fields are stated")
    }

    /// Every `$ref` in the document names a schema it defines.
    @Test func everyReferenceResolves() async throws {
        let (gateway, _, close) = try await Self.application()
        await close()
        let document = APIDocument.build(gateway.registry.all, version: "test")
        let text = String(decoding: try JSONCoding.encode(document), as: UTF8.self)
        let schemas = document["components"]?["schemas"]?.objectValue ?? [:]
        let references = text.matches(of: /"#\/components\/schemas\/([A-Za-z]+)"/).map { String($0.1) }
        #expect(references.count > 50)
        for name in Set(references) { #expect(schemas[name] != nil, "\(name) is referenced but not defined") }
        for (name, schema) in schemas { #expect(schema != [:], "\(name) is defined empty") }
    }

    @Test func errorsAreJSONWithACodeAndAStatus() async throws {
        let (_, app, close) = try await Self.application()
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/nothing", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body) == #"{"error":{"code":"not_found","message":"no route GET /v1/nothing"}}"#)
            }
            try await client.execute(uri: "/v1/orders", method: .post) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
                #expect(String(buffer: response.body).contains(#""code":"unauthorized""#))
            }
            try await client.execute(uri: "/v1/orders", method: .get, headers: [.authorization: "Basic eDp5"]) { response in
                #expect(response.status == .unauthorized, "a bearer route does not take Basic")
            }
            try await client.execute(
                uri: "/trips/abc", method: .get, headers: [.authorization: "Basic " + Data("ridesharing:wrong".utf8).base64EncodedString()]
            ) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Basic realm=\"ridesharing\"")
            }
            try await client.execute(uri: "/v1/users", method: .post, body: ByteBuffer(string: "{nope")) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains(#""code":"invalid_json""#))
            }
            try await client.execute(uri: "/v1/users", method: .post, body: ByteBuffer(string: "[1]")) { response in
                #expect(response.status == .unprocessableContent)
            }
            try await client.execute(uri: "/v1/users", method: .post, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .serviceUnavailable, "nobody answers on this bus")
                #expect(String(buffer: response.body).contains(#""code":"unavailable""#))
            }
            try await client.execute(uri: "/not-a-share-id", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
        await close()
    }

    /// A path the gateway serves, asked with a method it does not answer, is 405 with `Allow`; a
    /// WebSocket path asked without an upgrade wants a token first (401), like every /v1 route.
    @Test func wrongMethodsAre405AndWebSocketPathsWantATokenFirst() async throws {
        let (_, app, close) = try await Self.application()
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/orders", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, POST")
                #expect(String(buffer: response.body).contains(#""code":"method_not_allowed""#))
            }
            try await client.execute(uri: "/v1/orders/o-1/accept", method: .get) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "POST")
            }
            // Any method, even one HTTP does not name; the most specific path decides (`/trips`, not `/{share_id}`).
            for (uri, method, allowed) in [
                ("/v1/orders", HTTPRequest.Method("QUERY")!, "GET, POST"), ("/trips", .options, "POST"), ("/dashboard", .trace, "GET"),
            ] {
                try await client.execute(uri: uri, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(response.headers[.allow] == allowed, "\(method) \(uri)")
                }
            }
            for path in ["/v1/me/live", "/v1/orders/o-1/live"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .unauthorized, "\(path) without a token")
                }
                try await client.execute(uri: path, method: .post) { response in
                    #expect(response.status == .methodNotAllowed, "\(path) is GET only")
                }
            }
        }
        await close()
    }

    @Test func shareIDsAreSevenLettersOrDigits() {
        #expect(ShareRoutes.isShareID("nYAaQht"))
        #expect(!ShareRoutes.isShareID("dashboard"))
        #expect(!ShareRoutes.isShareID("abc/def"))
        #expect(!ShareRoutes.isShareID("abcdéf"))
    }

    @Test func theBasicCredentialsAreComparedWhole() {
        #expect(BasicAuthentication.constantTimeEqual("a:b", "a:b"))
        #expect(!BasicAuthentication.constantTimeEqual("a:b", "a:c"))
        #expect(!BasicAuthentication.constantTimeEqual("a:b", "a:bb"))
    }
}
