import Foundation
import ServiceKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small HTTP client for `/health` and `/metrics` (ridectl) and the gateway's API (tests).
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

    public static func get(_ url: String, timeout: Duration = .seconds(2)) async throws -> Response {
        try await send("GET", url, timeout: timeout)
    }

    /// Any request: `method`, headers and an optional body.
    public static func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        timeout: Duration = .seconds(2)
    ) async throws -> Response {
        guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https" else { throw ProbeError.invalidURL(url) }
        var request = URLRequest(url: parsed)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body) }
        // At least a second: Foundation on Linux (6.3.1) failed every request given less, at once,
        // with -1001 "timed out" (seen: 0.5 and 0.99 s failed in 2 ms, 1.0 s answered) — for 30 s
        // every health wait of a test process failed so.
        request.timeoutInterval = max(1, Double(timeout.milliseconds) / 1000)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = request.timeoutInterval
        let session = URLSession(configuration: configuration, delegate: NoChallenges(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (data, response) = try await session.data(for: request)
            let http = response as? HTTPURLResponse
            let headers = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { headers, field in
                if let name = field.key as? String, let value = field.value as? String { headers[name.lowercased()] = value }
            }
            return Response(status: http?.statusCode ?? 0, body: data, headers: headers)
        } catch {
            throw ProbeError.unreachable(url, error.localizedDescription)
        }
    }
}

/// Declines every authentication challenge. Foundation on Linux, given a `401` with
/// `WWW-Authenticate: Basic` and no delegate (or `.performDefaultHandling`), waited forever (seen
/// with the gateway's HTTP Basic routes); declined, the request fails at once ("cancelled").
private final class NoChallenges: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.rejectProtectionSpace, nil)
    }
}
