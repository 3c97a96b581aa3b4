import Bus
import Foundation
import Hummingbird
import RideContract
import RideModels
import ServiceKit
import Wire

/// Social sign-in: the gateway verifies the provider's token (`IdentityVerifiers`), then `users`
/// logs the identity's account in, making one the first time (`users.login_with_identity`), or
/// links the identity to the caller's account (`users.link_identity`). A refused token is a 401
/// naming the failed check, logged at most once per client address and interval, and reaches no service.
struct IdentityRoutes {
    let platform: PlatformCalls
    let verifiers: IdentityVerifiers
    let limits: RateLimits
    let rejections: RejectionLog

    static let providerPath = ["provider": "apple, google or facebook (as configured)"]

    func register(public open: RecordedRoutes, authenticated routes: RecordedRoutes) {
        let body = IdentityTokenBody.wireSchema.members
        open.on(
            .post, "auth/oidc/{provider}",
            RouteDoc(
                "Log in with Apple, Google (an ID token) or Facebook (an access token); the first log-in makes the account", tag: .accounts,
                body: body,
                path: Self.providerPath, reply: Session.self, "the session, as POST /v1/sessions answers", errors: [401, 404, 429, 503],
                fieldRules:
                    "apple and google take id_token, facebook access_token; role is required (a driver's new account needs car and device_id)",
                op: Ops.Users.loginWithIdentity.fullName)
        ) { request, context in
            let provider = try verifiers.provider(named: try context.parameters.require("provider"))
            // An attempt of the client's address, as a password log-in is: each may cost a JWKS fetch or a Graph call.
            try limits.admitAttempt(request, context, account: nil)
            let (sent, identity) = try await verified(provider, request, context)
            guard let role = sent.role else {
                throw GatewayError(.unprocessableContent, "invalid_params", "role: required, rider or driver")
            }
            let params = IdentityLoginParams(
                provider: provider, subject: identity.subject, role: role, name: Self.name(sent.name, identity, role: role),
                deviceID: sent.deviceID, car: sent.car)
            // A retry with the same key gets the same session (the params hold no token, so a retry's fresh one matches).
            return try await platform.forward(Ops.Users.loginWithIdentity, params, keyedBy: request)
        }
        routes.on(
            .post, "me/identities/{provider}",
            RouteDoc(
                "Link an Apple, Google or Facebook identity to the caller's account, so it logs in with it too", tag: .accounts,
                body: body.filter { ["id_token", "access_token", "nonce", "current_password"].contains($0.key) }, path: Self.providerPath,
                reply: LinkedIdentity.self,
                status: 201, "the identity linked (200 when it was already)", errors: [401, 403, 404, 409, 429, 503],
                fieldRules:
                    "apple and google take id_token, facebook access_token; a new link needs current_password, or a session that logged in within the last minutes (else 403 reauthentication_required)",
                op: Ops.Users.linkIdentity.fullName)
        ) { request, context in
            let provider = try verifiers.provider(named: try context.parameters.require("provider"))
            let user = try context.requireUser()
            let (sent, identity) = try await verified(provider, request, context)
            if sent.currentPassword != nil {
                // Each try of a password is a log-in attempt of the account, as on PATCH /v1/me.
                try limits.admitAttempt(request, context, account: "user \(user.id)")
            }
            let params = LinkIdentityParams(
                userID: user.id, provider: provider, subject: identity.subject, currentPassword: sent.currentPassword,
                sessionID: BearerAuthentication.sessionID(in: request))
            return try await platform.forward(Ops.Users.linkIdentity, params, keyedBy: request)
        }
    }

    /// The body, and the identity its token vouches for (a refusal logged once per address and interval).
    private func verified(_ provider: IdentityProvider, _ request: Request, _ context: GatewayContext) async throws -> (
        IdentityTokenBody, VerifiedIdentity
    ) {
        let json = try await RequestJSON.object(request, context: context)
        let sent = try OpRouter.decodeParams(IdentityTokenBody.self, op: "auth/oidc", from: try JSONCoding.encode(JSONValue.object(json)))
        do {
            return (sent, try await verifiers.verify(provider, sent))
        } catch let rejection as IdentityRejection {
            let address = ClientAddress.of(request, peer: context.peer, hops: limits.forwardedForHops)
            rejections.note("\(provider.rawValue) \(rejection.reason.rawValue)", from: address, logger: context.logger)
            throw rejection.gatewayError
        }
    }

    /// A new account's name: the one the app sent, else the provider's, else the role's.
    static func name(_ sent: String?, _ identity: VerifiedIdentity, role: UserRole) -> String {
        if let sent { return sent }
        let fromProvider = (identity.name ?? identity.email?.split(separator: "@").first.map(String.init) ?? "")
            .unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }
        let name = String(String.UnicodeScalarView(fromProvider.prefix(100))).trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? (role == .rider ? "Rider" : "Driver") : name
    }
}
