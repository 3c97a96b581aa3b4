import Crypto
import Foundation
import HTTPTypes
import Wire

/// The dashboard's sign-in as a browser keeps it: a cookie the gateway signed (HMAC-SHA256 under
/// a key of the operator's secret key) saying until when it holds, and a CSRF token bound to it
/// that the page sends back in `X-CSRF-Token` with every change. Nothing is stored: every gateway
/// instance verifies what any issued, and changing the secret key ends every session.
struct OperatorSessions: Sendable {
    /// HttpOnly: the session itself, never readable by a script.
    static let cookie = "ride_operator"
    /// Readable by the dashboard's script, which echoes it in `csrfHeader`; another site can
    /// neither read it nor make it.
    static let csrfCookie = "ride_operator_csrf"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    static let lifetime: TimeInterval = 8 * 3600

    private let key: SymmetricKey

    init(secretKey: String) {
        key = SymmetricKey(
            data: Data(
                HMAC<SHA256>.authenticationCode(for: Data("ride operator session v1".utf8), using: SymmetricKey(data: Data(secretKey.utf8)))
            ))
    }

    /// A new session: its cookie's value, its CSRF token and when both end.
    struct Issued: Equatable {
        var cookie: String
        var csrf: String
        var expires: Date
    }

    func issue(now: Date) -> Issued {
        var generator = SystemRandomNumberGenerator()
        let nonce = Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        let expires = Int64(now.timeIntervalSince1970 + Self.lifetime)
        let body = "\(expires).\(nonce)"
        return Issued(
            cookie: body + "." + mac("session." + body), csrf: csrf(nonce: nonce), expires: Date(timeIntervalSince1970: Double(expires)))
    }

    /// The session's nonce when `value` is a cookie this key signed that has not ended; nil otherwise.
    func verify(_ value: String, now: Date) -> String? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expires = Int64(parts[0]), Double(expires) > now.timeIntervalSince1970 else { return nil }
        let expected = mac("session.\(parts[0]).\(parts[1])")
        guard BasicAuthentication.constantTimeEqual(String(parts[2]), expected) else { return nil }
        return String(parts[1])
    }

    /// The CSRF token of the session whose nonce this is.
    func csrf(nonce: String) -> String { mac("csrf." + nonce) }

    private func mac(_ text: String) -> String { Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key))) }
}
