import Foundation
import Hummingbird
import JWTKit
import PlatformLauncher
import Synchronization
import Wire
import _CryptoExtras

/// A local identity provider on a free port, speaking what the gateway asks of Apple's and
/// Google's (`/.well-known/openid-configuration` naming `/jwks`, whose keys sign its ID tokens
/// with RS256 and ES256) and of Facebook's Graph API (`GET /debug_token`). Tokens are signed with
/// jwt-kit; a key can be kept out of the JWKS (a token naming it is from nobody the gateway knows)
/// or published later (the provider rotating its keys).
final class FakeIdentityProvider: Sendable {
    static let clientID = "com.example.axride"
    static let facebookAppID = "1234567890"
    static let facebookAppSecret = "fb-app-secret"

    let port: Int
    var issuer: String { "http://127.0.0.1:\(port)" }
    /// Every key it signs with, by kid.
    private let signing = JWTKeyCollection()
    private let published = Mutex<[String: JSONValue]>([:])
    /// Facebook access token → what `debug_token` says of it (`data`).
    private let facebookTokens = Mutex<[String: JSONValue]>([:])
    /// Requests to each path, to tell a cached JWKS from a fetched one.
    private let hits = Mutex<[String: Int]>([:])
    private let server = Mutex<Task<Void, any Error>?>(nil)

    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var exp: Int
        var iat: Int
        var nonce: String?
        var name: String?
        var email: String?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private init(port: Int) { self.port = port }

    static func start() async throws -> FakeIdentityProvider {
        let provider = FakeIdentityProvider(port: try FreePort.next())
        let router = Router()
        router.get(".well-known/openid-configuration") { _, _ -> Response in
            provider.count("discovery")
            return try Self.json(["issuer": .string(provider.issuer), "jwks_uri": .string(provider.issuer + "/jwks")])
        }
        router.get("jwks") { _, _ -> Response in
            provider.count("jwks")
            return try Self.json(["keys": .array(provider.published.withLock { Array($0.values) })])
        }
        router.get("debug_token") { request, _ -> Response in
            let query = request.uri.queryParameters
            guard query.get("access_token") == "\(facebookAppID)|\(facebookAppSecret)" else {
                return try Self.json(
                    ["error": ["message": "Invalid OAuth access token.", "type": "OAuthException", "code": 190]], status: .badRequest)
            }
            guard let token = query.get("input_token"), let data = provider.facebookTokens.withLock({ $0[token] }) else {
                return try Self.json(
                    [
                        "error": [
                            "message": "Invalid OAuth access token - Cannot parse access token", "type": "OAuthException", "code": 190,
                        ]
                    ], status: .badRequest)
            }
            return try Self.json(["data": data])
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: provider.port)))
        provider.server.withLock { $0 = Task { try await app.runService() } }
        try await provider.addRSA("rsa-1")
        try await provider.addES256("ec-1")
        try await eventually("the identity provider answers", timeout: .seconds(60)) {
            (try? await HTTPProbe.send("GET", provider.issuer + "/jwks", timeout: .seconds(5)))?.status == 200
        }
        return provider
    }

    func stop() { server.withLock { $0?.cancel() } }

    func requests(to path: String) -> Int { hits.withLock { $0[path] ?? 0 } }
    private func count(_ path: String) { hits.withLock { $0[path, default: 0] += 1 } }

    /// A new RSA key signing as `kid`, in the JWKS when `publish`.
    func addRSA(_ kid: String, publish: Bool = true) async throws {
        let key = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        await signing.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
        if publish {
            publishKey(
                kid,
                [
                    "kty": "RSA", "alg": "RS256", "use": "sig", "kid": .string(kid), "n": .string(Self.base64URL(modulus)),
                    "e": .string(Self.base64URL(exponent)),
                ])
        }
    }

    /// A new P-256 key signing as `kid` (ES256), in the JWKS.
    func addES256(_ kid: String) async throws {
        let key = ES256PrivateKey()
        await signing.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        guard let (x, y) = key.publicKey.parameters else { throw TestFailure("no P-256 parameters") }
        publishKey(kid, ["kty": "EC", "alg": "ES256", "use": "sig", "crv": "P-256", "kid": .string(kid), "x": .string(x), "y": .string(y)])
    }

    private func publishKey(_ kid: String, _ jwk: [String: JSONValue]) { published.withLock { $0[kid] = .object(jwk) } }

    /// An ID token of `subject` signed with `kid`; `change` alters the claims first.
    func idToken(
        _ subject: String, kid: String = "rsa-1", nonce: String? = nil, name: String? = nil, _ change: (inout Claims) -> Void = { _ in }
    ) async throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims = Claims(
            iss: issuer, sub: subject, aud: Self.clientID, exp: now + 600, iat: now, nonce: nonce, name: name,
            email: "\(subject)@example.com")
        change(&claims)
        return try await signing.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// A token whose header names `kid` but which another key signed (a forgery).
    func forgedToken(_ subject: String, kid: String = "rsa-1") async throws -> String {
        let forger = JWTKeyCollection()
        await forger.add(
            rsa: try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048)), digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: kid))
        let now = Int(Date().timeIntervalSince1970)
        return try await forger.sign(
            Claims(iss: issuer, sub: subject, aud: Self.clientID, exp: now + 600, iat: now), kid: JWKIdentifier(string: kid))
    }

    /// A Facebook user access token `debug_token` answers for with `data` (its defaults: valid, for our app, for an hour).
    func facebookToken(user: String, _ change: (inout [String: JSONValue]) -> Void = { _ in }) -> String {
        let token = "EAAB" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var data: [String: JSONValue] = [
            "app_id": .string(Self.facebookAppID), "type": "USER", "application": "AxRide", "is_valid": true, "user_id": .string(user),
            "expires_at": .number(Date().timeIntervalSince1970 + 3600), "scopes": ["public_profile", "email"],
        ]
        change(&data)
        facebookTokens.withLock { $0[token] = .object(data) }
        return token
    }

    /// The gateway's flags for this provider as Apple, Google and Facebook.
    var gatewayArguments: [String] {
        [
            "--apple-client-id", Self.clientID, "--apple-issuer", issuer, "--google-client-id", "web-client,\(Self.clientID)",
            "--google-issuer", issuer,
            "--facebook-app-id", Self.facebookAppID, "--facebook-app-secret", Self.facebookAppSecret, "--facebook-graph-url", issuer,
        ]
    }

    private static func json(_ value: [String: JSONValue], status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONCoding.encode(JSONValue.object(value)))))
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
    }
}
