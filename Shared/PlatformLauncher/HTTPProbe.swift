import AsyncHTTPClient
import Foundation

/// A small HTTP client for `/health` and `/metrics` (ridectl, the image's health checks) and the
/// gateway's API (tests). Requests go through async-http-client's process-wide pooled client, so a
/// probe needs no libcurl (Foundation's URLSession on Linux does) and reuses its connections.
public enum HTTPProbe {
    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        /// The response's headers, names lowercased.
        public var headers: [String: String] = [:]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum ProbeError: Error, CustomStringConvertible {
        case invalidURL(String)
        case unreachable(String, String)
        public var description: String {
            switch self {
            case .invalidURL(let url): "'\(url)' is not an http:// URL"
            case .unreachable(let url, let why): "\(url) is unreachable: \(why)"
            }
        }
    }

    /// The most of an answer that is read (a Prometheus query's answer is the largest).
    static let maximumBody = 64 * 1024 * 1024

    public static func get(_ url: String, timeout: Duration = .seconds(2)) async throws -> Response {
        try await send("GET", url, timeout: timeout)
    }

    /// Any request: `method`, headers and an optional body. `timeout` covers the whole exchange, the answer's body too.
    public static func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        timeout: Duration = .seconds(2)
    ) async throws -> Response {
        guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil else {
            throw ProbeError.invalidURL(url)
        }
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        if let body { request.body = .bytes(body) }
        do {
            return try await withThrowingTaskGroup(of: Response.self) { group in
                group.addTask { [request] in
                    let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
                    let data = Data(try await response.body.collect(upTo: maximumBody).readableBytesView)
                    let headers = response.headers.reduce(into: [String: String]()) { headers, field in
                        headers[field.name.lowercased()] = headers[field.name.lowercased()].map { "\($0), \(field.value)" } ?? field.value
                    }
                    return Response(status: Int(response.status.code), body: data, headers: headers)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw ProbeError.unreachable(url, "no whole answer within \(timeout)")
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw ProbeError.unreachable(url, "no answer") }
                return first
            }
        } catch let error as ProbeError {
            throw error
        } catch {
            throw ProbeError.unreachable(url, "\(error)")
        }
    }
}
