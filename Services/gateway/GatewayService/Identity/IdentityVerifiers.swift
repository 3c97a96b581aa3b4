import Foundation
import RideModels

/// The configured providers' checks, one per provider, kept for the gateway's life (each OIDC
/// provider's keys are cached in its verifier).
struct IdentityVerifiers: Sendable {
    private let apple: OIDCVerifier?
    private let google: OIDCVerifier?
    private let facebook: FacebookTokenCheck?

    init(_ settings: IdentitySettings) {
        apple = settings.apple.map { OIDCVerifier(issuer: $0.issuer, audiences: Set($0.clientIDs)) }
        // Google's tokens name their issuer with or without the scheme.
        google = settings.google.map { config in
            OIDCVerifier(
                issuer: config.issuer, issuerAliases: config.issuer.hasPrefix("https://") ? [String(config.issuer.dropFirst(8))] : [],
                audiences: Set(config.clientIDs))
        }
        facebook = settings.facebook.map { FacebookTokenCheck(graphURL: $0.graphURL, appID: $0.appID, appSecret: $0.appSecret) }
    }

    /// The provider named by a route's path: 404 when there is no such provider or it is off.
    func provider(named name: String) throws -> IdentityProvider {
        guard let provider = IdentityProvider(rawValue: name) else {
            throw GatewayError(
                .notFound, "unknown_provider", "no sign-in provider \(name.prefix(40)); the providers are apple, google and facebook")
        }
        let on =
            switch provider {
            case .apple: apple != nil
            case .google: google != nil
            case .facebook: facebook != nil
            }
        guard on else { throw Self.notConfigured(provider) }
        return provider
    }

    private static func notConfigured(_ provider: IdentityProvider) -> GatewayError {
        GatewayError(.notFound, "provider_not_configured", "sign-in with \(provider.rawValue) is not configured on this platform")
    }

    /// The identity the body's token vouches for; 422 when the token the provider needs is missing.
    func verify(_ provider: IdentityProvider, _ body: IdentityTokenBody) async throws -> VerifiedIdentity {
        switch provider {
        case .apple, .google:
            guard let verifier = provider == .apple ? apple : google else { throw Self.notConfigured(provider) }
            guard let token = body.idToken else {
                throw GatewayError(
                    .unprocessableContent, "invalid_params", "id_token: required, the ID token \(provider.rawValue) gave the app")
            }
            return try await verifier.verify(token, nonce: body.nonce)
        case .facebook:
            guard let facebook else { throw Self.notConfigured(provider) }
            guard let token = body.accessToken else {
                throw GatewayError(
                    .unprocessableContent, "invalid_params", "access_token: required, the user access token Facebook Login gave the app")
            }
            return try await facebook.verify(token)
        }
    }
}
