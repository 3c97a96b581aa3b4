import Bus
import Foundation
import HTTPTypes
import Hummingbird
import RideModels
import Wire

/// The gateway's way to the services: an op's JSON in, the reply's status and JSON out, untouched
/// (the services' errors already name the field at fault, in the platform's error shape).
struct PlatformCalls: Sendable {
    let client: ServiceClient

    /// Calls `op` with `body` as the app sent it (the service checks it); the reply as it came.
    /// Sent again when no reply comes only if the request allows it (`CallRetries`).
    func reply<Params, Reply>(_ op: Op<Params, Reply>, body: JSONValue) async throws -> ServiceReply {
        try await client.callRaw(op, json: JSONCoding.encode(body), attempts: CallRetries.attempts)
    }

    /// Calls `op` with `body` as the app sent it and answers with its reply as it came.
    func forward<Params, Reply>(_ op: Op<Params, Reply>, body: JSONValue) async throws -> Response {
        JSONBody.response(try await reply(op, body: body))
    }

    /// Calls `op` with the params the gateway made, under `request`'s idempotency key when it
    /// sent one (`IdempotencyKey`); the reply as it came.
    func reply<Params, Reply>(_ op: Op<Params, Reply>, _ params: Params, keyedBy request: Request? = nil) async throws -> ServiceReply {
        var body = try JSONValue(encoding: params)
        if let request, case .object(var members) = body {
            try IdempotencyKey.stamp(&members, from: request)
            body = .object(members)
        }
        return try await reply(op, body: body)
    }

    /// Calls `op` with the params the gateway made and answers with its reply as it came.
    func forward<Params, Reply>(_ op: Op<Params, Reply>, _ params: Params, keyedBy request: Request? = nil) async throws -> Response {
        JSONBody.response(try await reply(op, params, keyedBy: request))
    }

    /// Calls `op` and decodes a success; an error reply is thrown as it came. For the gateway's own
    /// reads (a token's user, a share's trip) and asks that answer the same when repeated (a
    /// ride's share id): sent again when no reply comes, whatever the request.
    func call<Params, Reply: Decodable>(_ op: Op<Params, Reply>, _ params: Params) async throws -> Reply {
        try await client.call(op, params)
    }
}

/// Reading what apps send.
enum RequestJSON {
    /// The body as a JSON object (an empty body is an empty object); 400 when it is not JSON,
    /// 422 when it is JSON but not an object.
    static func object(_ request: Request, context: some RequestContext) async throws -> [String: JSONValue] {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let bytes = Array(buffer.readableBytesView)
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [:] }
        let value: JSONValue
        do {
            value = try JSONCoding.decode(JSONValue.self, from: bytes)
        } catch {
            throw GatewayError(.badRequest, "invalid_json", "the body is not valid JSON")
        }
        guard case .object(let members) = value else {
            throw GatewayError(.unprocessableContent, "invalid_params", "(body): expected a JSON object")
        }
        return members
    }

    /// A query parameter as a finite number; nil when absent, 422 naming it when malformed.
    static func number(_ request: Request, _ name: String) throws -> Double? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw GatewayError(.unprocessableContent, "invalid_params", "\(name): expected a number, got '\(text.prefix(40))'")
        }
        return value
    }
}
