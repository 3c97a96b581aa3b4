import AsyncHTTPClient
import Foundation
import Providers
import Wire

/// An error object of Stripe's API (`{"error":{"type","code","message"}}`) with the HTTP status.
public struct StripeError: Error, Equatable, CustomStringConvertible {
    public var status: Int
    public var type: String
    public var code: String?
    public var message: String

    public init(status: Int, type: String, code: String? = nil, message: String) {
        self.status = status
        self.type = type
        self.code = code
        self.message = message
    }

    /// Retrying the same request can help (Stripe's own libraries retry these): 409 (a concurrent
    /// request with the key), 429, 5xx, and the connection failing (status 0).
    public var isRetryable: Bool { status == 0 || status == 409 || status == 429 || status >= 500 }

    public var description: String { "Stripe \(status) \(type)\(code.map { "/\($0)" } ?? ""): \(message)" }
}

/// Stripe's REST API as documented: `Authorization: Bearer sk_…`, form-encoded POST bodies with an
/// `Idempotency-Key` on every POST (the caller derives it from what the request is for, so a retry
/// is the same request), JSON answers, errors as error objects, lists paged by `starting_after`.
public struct StripeClient: Sendable {
    /// `https://api.stripe.com` for the real API; the fake provider's address in tests.
    public let base: String
    let secretKey: String
    let http: HTTPClient
    /// The API version the shapes here follow (sent as `Stripe-Version`, required for ephemeral keys).
    public static let apiVersion = "2024-06-20"
    static let answerLimit = 1 << 20

    public init(base: String, secretKey: String, http: HTTPClient) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.secretKey = secretKey
        self.http = http
    }

    public func post(_ path: String, _ fields: [(String, String)], idempotencyKey: String) async throws -> JSONValue {
        var request = HTTPClientRequest(url: base + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        request.body = .bytes(Array(StripeForm.encode(fields).utf8))
        return try await send(request)
    }

    public func get(_ path: String, _ query: [(String, String)] = []) async throws -> JSONValue {
        var request = HTTPClientRequest(url: base + path + (query.isEmpty ? "" : "?" + StripeForm.encode(query)))
        request.method = .GET
        return try await send(request)
    }

    /// Every object of a list endpoint, page after page (`has_more`, `starting_after` = the last id).
    public func list(_ path: String, _ query: [(String, String)] = [], pageSize: Int = 100) async throws -> [JSONValue] {
        var objects: [JSONValue] = []
        var after: String?
        while true {
            let page = try await get(path, query + [("limit", "\(pageSize)")] + (after.map { [("starting_after", $0)] } ?? []))
            let data = page["data"]?.arrayValue ?? []
            objects += data
            guard page["has_more"] == .bool(true), let last = data.last?["id"]?.stringValue else { return objects }
            after = last
        }
    }

    func send(_ request: HTTPClientRequest) async throws -> JSONValue {
        var request = request
        request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
        request.headers.add(name: "Stripe-Version", value: Self.apiVersion)
        let response: HTTPClientResponse
        let body: [UInt8]
        do {
            response = try await http.execute(request, timeout: .seconds(30))
            body = Array(try await response.body.collect(upTo: Self.answerLimit).readableBytesView)
        } catch {
            throw StripeError(status: 0, type: "api_connection_error", message: "\(request.method) \(request.url): \(error)")
        }
        let json = try? JSONCoding.decode(JSONValue.self, from: body)
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            let error = json?["error"]
            throw StripeError(
                status: status, type: error?["type"]?.stringValue ?? "api_error", code: error?["code"]?.stringValue,
                message: error?["message"]?.stringValue ?? "HTTP \(status) without an error object")
        }
        guard let json else { throw StripeError(status: status, type: "api_error", message: "the answer to \(request.url) is not JSON") }
        return json
    }
}
