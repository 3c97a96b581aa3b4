import AsyncHTTPClient
import Foundation
import Wire

/// One app's request to the gateway, sent again when the gateway says nothing was stored: a
/// `429` after its `Retry-After` (for up to `patience` in all: many people signing up from one
/// address wait their turn), a `503` that says so (storage away for a moment; a proxy in front
/// with no gateway to send it to) after a second, a `409 request_in_progress` (a try that timed out
/// is still being answered: its reply comes to the same key) after a second; a
/// connection that fails is tried again only for what cannot happen twice (a read, or a request
/// with an `Idempotency-Key`), and so is one a proxy in front answers 502 or 504.
struct GatewayRequests: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let http: HTTPClient
    let base: String
    var attempts = 6
    var patience: Duration = .seconds(180)

    /// The reply's body, for a 2xx; otherwise `Failure` naming the request, the status and the body.
    func send(_ method: String, _ path: String, token: String? = nil, body: [UInt8]? = nil, key: String? = nil) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: base + path)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let key { request.headers.add(name: "Idempotency-Key", value: key) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let repeatable = method == "GET" || key != nil
        var attempt = 0
        var waited: Duration = .zero
        while true {
            attempt += 1
            let last = attempt >= attempts
            let status: UInt
            let bytes: [UInt8]
            let retryAfter: Int?
            do {
                let response = try await http.execute(request, timeout: .seconds(30))
                bytes = Array((try await response.body.collect(upTo: 4 << 20)).readableBytesView)
                status = response.status.code
                retryAfter = response.headers.first(name: "Retry-After").flatMap { Int($0) }
            } catch {
                guard repeatable, !last else { throw Failure("\(method) \(path): \(error)") }
                try await Task.sleep(for: .seconds(1))
                continue
            }
            if (200..<300).contains(status) { return bytes }
            let text = String(decoding: bytes.prefix(300), as: UTF8.self)
            switch status {
            case 429 where waited < patience:
                // A little more than asked: the callers told the same moment do not all come back at once.
                let wait = Duration.seconds(min(max(retryAfter ?? 1, 1), 30)) + .milliseconds(Int.random(in: 0..<1000))
                waited += wait
                attempt -= 1
                try await Task.sleep(for: wait)
            case 503 where !last && (repeatable || Self.storedNothing(bytes)): try await Task.sleep(for: .seconds(1))
            case 409 where key != nil && waited < patience && Self.errorCode(bytes) == "request_in_progress":
                waited += .seconds(1)
                attempt -= 1
                try await Task.sleep(for: .seconds(1))
            // A proxy in front lost the gateway mid-request: it may have been served, so only what cannot happen twice goes again.
            case 502 where repeatable && !last, 504 where repeatable && !last: try await Task.sleep(for: .seconds(1))
            default: throw Failure("\(method) \(path.split(separator: "?")[0]): \(status) \(text)")
            }
        }
    }

    /// A 503 that says nothing was stored: the database away (`storage_unavailable`, ingest's
    /// `store_unavailable`), or not the gateway's answer at all (a proxy's page: no gateway took it).
    /// The gateway's `unavailable` — a service did not answer — may have been served.
    static func storedNothing(_ body: [UInt8]) -> Bool {
        guard let code = errorCode(body) else { return true }
        return ["storage_unavailable", "store_unavailable"].contains(code)
    }

    /// The `error.code` of a JSON error reply; nil for a body that is not one.
    static func errorCode(_ body: [UInt8]) -> String? {
        guard let reply = try? JSONCoding.decode(JSONValue.self, from: body) else { return nil }
        return reply["error"]?["code"]?.stringValue ?? ""
    }
}
