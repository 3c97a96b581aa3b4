import AsyncHTTPClient
import Foundation
import Wire

/// GETs of a provider's documents (discovery, JWKS, Graph's `debug_token`): JSON, bounded in size
/// and time. A provider that cannot be reached is a 503, never the caller's fault.
enum IdentityHTTP {
    static let maximumBody = 1 << 20

    /// The status and the body as JSON (`.null` when it is not JSON).
    static func get(_ url: String) async throws -> (status: Int, body: JSONValue) {
        do {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: maximumBody)
            return (Int(response.status.code), (try? JSONCoding.decode(JSONValue.self, from: Array(body.readableBytesView))) ?? .null)
        } catch {
            throw unavailable("\(URL(string: url)?.host ?? "the provider") did not answer: \(error)")
        }
    }

    static func unavailable(_ message: String) -> GatewayError {
        GatewayError(.serviceUnavailable, "identity_provider_unavailable", message)
    }
}
