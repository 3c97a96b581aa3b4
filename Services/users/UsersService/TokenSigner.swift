import Bus
import Crypto
import Foundation
import RideModels
import Wire

/// Signed, expiring bearer tokens: `base64url(claims JSON).base64url(HMAC-SHA256(claims))`. Only
/// `ride-users` holds the key, so other services turn a token into a user by asking it
/// (`users.authenticate`) — a stolen database of another service yields no way to mint tokens.
public struct TokenSigner: Sendable {
    public struct Claims: Codable, Sendable, Equatable {
        /// The user id.
        public var sub: String
        public var role: UserRole
        /// Seconds since 1970.
        public var iat: Int64
        public var exp: Int64
    }

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case malformed, badSignature, expired

        public var description: String {
            switch self {
            case .malformed: return "the token is not one of ours (expected two base64url parts joined by a dot)"
            case .badSignature: return "the token's signature does not verify"
            case .expired: return "the token has expired; log in again"
            }
        }
    }

    /// The key's bytes (`SymmetricKey` is not `Sendable`; one is made per use, which costs nothing next to the HMAC).
    private let secret: [UInt8]
    public let lifetime: TimeInterval

    public init(secret: [UInt8], lifetime: TimeInterval) {
        self.secret = secret
        self.lifetime = lifetime
    }

    private var key: SymmetricKey { SymmetricKey(data: secret) }

    public func issue(for user: User, now: Date = Date()) -> (token: String, expiresAt: Date) {
        let issued = Int64(now.timeIntervalSince1970)
        let claims = Claims(sub: user.id, role: user.role, iat: issued, exp: issued + Int64(lifetime))
        let payload = (try? JSONCoding.encode(claims)) ?? []
        let signature = HMAC<SHA256>.authenticationCode(for: payload, using: key)
        let token = Base64URL.encode(payload) + "." + Base64URL.encode([UInt8](signature))
        return (token, Date(timeIntervalSince1970: TimeInterval(claims.exp)))
    }

    public func verify(_ token: String, now: Date = Date()) -> Result<Claims, Rejection> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1]) else {
            return .failure(.malformed)
        }
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key) else { return .failure(.badSignature) }
        guard let claims = try? JSONCoding.decode(Claims.self, from: payload) else { return .failure(.malformed) }
        guard Double(claims.exp) > now.timeIntervalSince1970 else { return .failure(.expired) }
        return .success(claims)
    }
}

enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 8192 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
