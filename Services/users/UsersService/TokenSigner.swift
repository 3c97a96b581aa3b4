import Crypto
import Foundation
import JWTKit
import RideModels
import Wire

/// Access tokens: HS256 JWTs whose header names the signing key (`kid`). New tokens are signed
/// with the current key; tokens of the previous key still verify, so a key rotates without logging
/// anyone out. Only `ride-users` holds the keys, so other services turn a token into a user by
/// asking it (`users.authenticate`) — a stolen database of another service mints no tokens.
public struct TokenSigner: Sendable {
    public struct Claims: JWTPayload, Equatable {
        /// The user id.
        public var sub: String
        public var role: UserRole
        /// Seconds since 1970.
        public var iat: Int64
        public var exp: Int64
        /// The session (its refresh token and revocation), `SessionRecord.id`.
        public var sid: String
        public var iss: String

        /// Expiry is checked by `TokenSigner.verify` against its clock, after the signature.
        public func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// Why a token is refused; `code` is the 401's reason code.
    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case malformed, badSignature, unknownKey, expired

        public var code: String { self == .expired ? "token_expired" : "token_invalid" }

        public var description: String {
            switch self {
            case .malformed: return "the token is not a JWT of ours"
            case .badSignature: return "the token's signature does not verify"
            case .unknownKey: return "the token names a signing key (kid) this service does not hold"
            case .expired: return "the token has expired; refresh it or log in again"
            }
        }
    }

    public static let issuer = "ride-users"
    /// Longer tokens are refused before parsing: ours are a few hundred bytes.
    static let maximumLength = 4096

    private let keys: JWTKeyCollection
    /// The kids held: jwt-kit would check a token naming any other with its default (first) key.
    private let known: Set<String>
    /// The kid new tokens are signed with.
    public let currentKey: String
    public let lifetime: TimeInterval

    /// `previous`: the key being rotated out, still accepted.
    public init(secret: [UInt8], previous: [UInt8]? = nil, lifetime: TimeInterval) async {
        let keys = JWTKeyCollection()
        currentKey = Self.keyID(secret)
        await keys.add(hmac: HMACKey(key: SymmetricKey(data: secret)), digestAlgorithm: .sha256, kid: JWKIdentifier(string: currentKey))
        var known: Set = [currentKey]
        if let previous, Self.keyID(previous) != currentKey {
            await keys.add(
                hmac: HMACKey(key: SymmetricKey(data: previous)), digestAlgorithm: .sha256, kid: JWKIdentifier(string: Self.keyID(previous))
            )
            known.insert(Self.keyID(previous))
        }
        self.keys = keys
        self.known = known
        self.lifetime = lifetime
    }

    /// A key's id: the first 8 bytes of its SHA-256, hex — the same on every instance, and naming no secret.
    static func keyID(_ secret: [UInt8]) -> String {
        SHA256.hash(data: secret).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    public func issue(for user: User, session: String, now: Date = Date()) async throws -> (token: String, expiresAt: Date) {
        let issued = Int64(now.timeIntervalSince1970)
        let claims = Claims(sub: user.id, role: user.role, iat: issued, exp: issued + Int64(lifetime), sid: session, iss: Self.issuer)
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: currentKey))
        return (token, Date(timeIntervalSince1970: TimeInterval(claims.exp)))
    }

    /// The claims of a token signed by one of the keys and not expired at `now`.
    public func verify(_ token: String, now: Date = Date()) async -> Result<Claims, Rejection> {
        switch await verifiedClaims(token) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let claims):
            guard Double(claims.exp) > now.timeIntervalSince1970 else { return .failure(.expired) }
            return .success(claims)
        }
    }

    /// The claims of a token signed by one of the keys, expired or not (log out accepts an expired token).
    public func verifiedClaims(_ token: String) async -> Result<Claims, Rejection> {
        guard !token.isEmpty, token.utf8.count <= Self.maximumLength else { return .failure(.malformed) }
        guard let header = Self.header(of: token) else { return .failure(.malformed) }
        guard let kid = header.kid, known.contains(kid) else { return .failure(.unknownKey) }
        do {
            let claims = try await keys.verify(token, as: Claims.self)
            guard claims.iss == Self.issuer else { return .failure(.badSignature) }
            return .success(claims)
        } catch let error as JWTError {
            switch error.errorType {
            case .signatureVerificationFailed: return .failure(.badSignature)
            case .unknownKID, .missingKIDHeader, .noKeyProvided: return .failure(.unknownKey)
            default: return .failure(.malformed)
            }
        } catch {
            return .failure(.malformed)
        }
    }

    private struct Header: Decodable {
        var kid: String?
    }

    /// The token's header (its first part, base64url JSON); nil when it is not one.
    private static func header(of token: String) -> Header? {
        guard let first = token.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first, !first.isEmpty else {
            return nil
        }
        guard let data = Base64URL.decode(first) else { return nil }
        return try? JSONDecoder().decode(Header.self, from: data)
    }
}
