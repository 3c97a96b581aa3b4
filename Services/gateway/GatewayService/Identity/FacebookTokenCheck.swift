import Foundation
import Wire

/// Facebook Login's check, as AxRide makes it: the app's user access token is given to the Graph
/// API's `debug_token` with the app's own token (`APP_ID|APP_SECRET`), which answers
/// `{"data":{"app_id","is_valid","user_id","expires_at",…}}`. The token must be valid, for this
/// app, and not expired; the person is `user_id` (app-scoped).
struct FacebookTokenCheck: Sendable {
    /// Graph's base URL, with its version if one is pinned (`https://graph.facebook.com/v21.0`).
    let graphURL: String
    let appID: String
    let appSecret: String
    static let maximumLength = 8192

    func verify(_ accessToken: String, now: Date = Date()) async throws -> VerifiedIdentity {
        guard accessToken.utf8.count <= Self.maximumLength, accessToken.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw IdentityRejection(.malformed, "the access_token is not a Facebook access token")
        }
        let reply = try await IdentityHTTP.get(
            "\(graphURL)/debug_token?input_token=\(Self.escaped(accessToken))&access_token=\(Self.escaped("\(appID)|\(appSecret)"))")
        // Graph answers 400 with an OAuthException for a token it cannot parse at all.
        if reply.status == 400, let message = reply.body["error"]?["message"]?.stringValue {
            throw IdentityRejection(.notValid, "Facebook refuses the access_token: \(message.prefix(200))")
        }
        guard reply.status == 200, let data = reply.body["data"]?.objectValue else {
            throw IdentityHTTP.unavailable("Facebook's debug_token answered \(reply.status)")
        }
        guard data["is_valid"] == .bool(true) else {
            let why = data["error"]?["message"]?.stringValue.map { ": \($0.prefix(200))" } ?? ""
            throw IdentityRejection(.notValid, "Facebook says the access_token is not valid\(why)")
        }
        guard data["app_id"]?.stringValue == appID else { throw IdentityRejection(.wrongAudience, "the access_token is another app's") }
        // 0: a token that does not expire.
        if let expiresAt = data["expires_at"]?.numberValue, expiresAt > 0, expiresAt <= now.timeIntervalSince1970 {
            throw IdentityRejection(.expired, "the access_token expired at \(Int(expiresAt))")
        }
        guard let user = data["user_id"]?.stringValue, !user.isEmpty, user.utf8.count <= 255 else {
            throw IdentityRejection(.malformed, "Facebook names no user for the access_token")
        }
        return VerifiedIdentity(subject: user)
    }

    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }
}
