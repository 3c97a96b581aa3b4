import Foundation
import JWTKit
import Wire

/// Verifies an OpenID Connect provider's ID tokens (Apple's, Google's): RS256 or ES256, signed by
/// a key of the provider's JWKS (found through its discovery document, kept an hour, fetched again
/// when a token names a key not in it — the provider rotated — at most every `refetchAfter`), from
/// the configured issuer, for one of our client ids, within its validity (`leeway` either side),
/// and with the nonce the app sent when it sent one.
actor OIDCVerifier {
    let issuer: String
    /// Other spellings of the issuer the provider uses (Google's `accounts.google.com`).
    let issuerAliases: Set<String>
    let audiences: Set<String>
    static let algorithms: Set<String> = ["RS256", "ES256"]
    static let leeway: TimeInterval = 60
    static let maximumLength = 8192
    private let keysLifetime: Duration = .seconds(3600)
    private let refetchAfter: Duration = .seconds(10)

    private struct KeySet {
        var keys: JWTKeyCollection
        var kids: Set<String>
        var fetchedAt: ContinuousClock.Instant
    }
    private var current: KeySet?
    private var fetching: Task<KeySet, any Error>?

    init(issuer: String, issuerAliases: Set<String> = [], audiences: Set<String>) {
        self.issuer = issuer
        self.issuerAliases = issuerAliases
        self.audiences = audiences
    }

    struct Claims: JWTPayload {
        var iss: String?
        var sub: String?
        var aud: AudienceClaim?
        var exp: Double?
        var iat: Double?
        var nbf: Double?
        var nonce: String?
        var email: String?
        var name: String?

        /// Checked by `OIDCVerifier.check`, after the signature, naming what failed.
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    /// The identity `token` vouches for; an `IdentityRejection` (401) when it does not, a 503 when the provider's keys cannot be had.
    func verify(_ token: String, nonce: String?, now: Date = Date()) async throws -> VerifiedIdentity {
        guard token.utf8.count <= Self.maximumLength, let header = Self.header(of: token) else {
            throw IdentityRejection(.malformed, "the id_token is not a JWT")
        }
        guard let alg = header.alg, Self.algorithms.contains(alg) else {
            throw IdentityRejection(.unsupportedAlgorithm, "the id_token's alg \(header.alg?.prefix(16) ?? "(none)") is not RS256 or ES256")
        }
        guard let kid = header.kid, !kid.isEmpty else { throw IdentityRejection(.unknownKey, "the id_token names no signing key (kid)") }
        var set = try await keySet(refresh: false)
        if !set.kids.contains(kid), ContinuousClock.now - set.fetchedAt >= refetchAfter {
            set = try await keySet(refresh: true)
        }
        guard set.kids.contains(kid) else {
            throw IdentityRejection(.unknownKey, "the id_token's key \(kid.prefix(64)) is not in the provider's JWKS")
        }
        let claims: Claims
        do {
            claims = try await set.keys.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw IdentityRejection(.badSignature, "the id_token's signature does not verify with the provider's key \(kid.prefix(64))")
        } catch {
            throw IdentityRejection(.malformed, "the id_token cannot be read: \(String(describing: error).prefix(120))")
        }
        return try check(claims, nonce: nonce, now: now)
    }

    /// The claims' checks, in the order a reader would make them.
    private func check(_ claims: Claims, nonce: String?, now: Date) throws -> VerifiedIdentity {
        guard let iss = claims.iss, iss == issuer || issuerAliases.contains(iss) else {
            throw IdentityRejection(.wrongIssuer, "the id_token's issuer \(claims.iss?.prefix(100) ?? "(none)") is not \(issuer)")
        }
        guard let aud = claims.aud, !audiences.isDisjoint(with: aud.value) else {
            throw IdentityRejection(.wrongAudience, "the id_token is not for this app's client id")
        }
        let seconds = now.timeIntervalSince1970
        guard let exp = claims.exp else { throw IdentityRejection(.malformed, "the id_token has no exp") }
        guard exp + Self.leeway > seconds else { throw IdentityRejection(.expired, "the id_token expired at \(Int(exp))") }
        if let iat = claims.iat, iat - Self.leeway > seconds {
            throw IdentityRejection(.notYetValid, "the id_token is issued in the future (iat \(Int(iat)))")
        }
        if let nbf = claims.nbf, nbf - Self.leeway > seconds {
            throw IdentityRejection(.notYetValid, "the id_token is not valid before \(Int(nbf))")
        }
        if let nonce, claims.nonce != nonce { throw IdentityRejection(.nonceMismatch, "the id_token's nonce is not the one sent") }
        guard let sub = claims.sub, !sub.isEmpty, sub.utf8.count <= 255 else {
            throw IdentityRejection(.malformed, "the id_token has no usable sub")
        }
        return VerifiedIdentity(subject: sub, name: claims.name, email: claims.email)
    }

    /// The provider's keys: those held while fresh, else fetched (one fetch at a time).
    private func keySet(refresh: Bool) async throws -> KeySet {
        if !refresh, let current, ContinuousClock.now - current.fetchedAt < keysLifetime { return current }
        if let fetching { return try await fetching.value }
        let task = Task { [issuer] in try await Self.fetch(issuer: issuer) }
        fetching = task
        defer { fetching = nil }
        do {
            let fetched = try await task.value
            current = fetched
            return fetched
        } catch {
            // Keys held a while longer beat refusing everyone while the provider is down.
            if let current { return current }
            throw error
        }
    }

    private static func fetch(issuer: String) async throws -> KeySet {
        let discovery = try await IdentityHTTP.get(issuer + "/.well-known/openid-configuration")
        guard discovery.status == 200, let jwksURL = discovery.body["jwks_uri"]?.stringValue else {
            throw IdentityHTTP.unavailable("\(issuer)'s discovery document answered \(discovery.status) without a jwks_uri")
        }
        let jwks = try await IdentityHTTP.get(jwksURL)
        guard jwks.status == 200, case .array(let entries)? = jwks.body["keys"] else {
            throw IdentityHTTP.unavailable("\(issuer)'s JWKS (\(jwksURL)) answered \(jwks.status) without keys")
        }
        let keys = JWTKeyCollection()
        var kids: Set<String> = []
        // One key of a type this cannot use does not lose the others.
        for entry in entries {
            guard let jwk = try? JSONCoding.decode(JWK.self, from: JSONCoding.encode(entry)), let kid = jwk.keyIdentifier,
                (try? await keys.add(jwk: jwk)) != nil
            else { continue }
            kids.insert(kid.string)
        }
        return KeySet(keys: keys, kids: kids, fetchedAt: .now)
    }

    /// The token's header (its first part, base64url JSON); nil when it is not one of three parts.
    private static func header(of token: String) -> Header? {
        CompactJWT.part(0, of: token).flatMap { try? JSONDecoder().decode(Header.self, from: $0) }
    }
}
