import Crypto
import Foundation
import Wire
import _CryptoExtras

/// The compact JWTs the push services take as credentials: APNs's provider token (ES256, signed with
/// the team's `.p8` key) and the assertion Google exchanges for an FCM access token (RS256, signed
/// with the service account's key). RFC 7515: base64url(header).base64url(claims).base64url(signature).
enum ProviderJWT {
    static func es256(header: [String: JSONValue], claims: [String: JSONValue], key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: ["alg": "ES256"].merging(header) { $1 }, claims: claims)
        // JWS's ES256 signature is r ‖ s, 64 bytes: the raw representation, not DER.
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    static func rs256(header: [String: JSONValue], claims: [String: JSONValue], key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: ["alg": "RS256", "typ": "JWT"].merging(header) { $1 }, claims: claims)
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5).rawRepresentation)
    }

    static func signingInput(header: [String: JSONValue], claims: [String: JSONValue]) -> String {
        Base64URL.encode(Data(header.jsonBytes)) + "." + Base64URL.encode(Data(claims.jsonBytes))
    }
}
