import Bus
import Foundation
import HTTPTypes
import Hummingbird
import RideContract
import RideModels
import Wire

/// The card provider's routes (`ride-orders --payments stripe`; with the ledger they answer 409):
/// AxRide's `/api/ephemeral_keys`, saved cards, the provider's page that adds one (the web app's
/// way) and `/connectStripe` for the apps, and the
/// provider's webhook endpoint, which has no bearer token — the `Stripe-Signature` header is the
/// provider's proof, checked by orders against the endpoint secret.
struct PaymentRoutes {
    let platform: PlatformCalls
    let limits: RateLimits
    /// The gateway's public address: the provider's card page sends the rider back to the web app there.
    let publicURL: String

    /// Stripe's events are a few kilobytes; the op takes up to 256 KiB.
    static let webhookBodyLimit = 262_144

    func register(public open: RecordedRoutes, authenticated routes: RecordedRoutes) {
        // Each ask makes the provider mint something: a few a minute per user.
        let limits = self.limits
        let providerCall: @Sendable (JSONValue, Request, GatewayContext) throws -> Void = { _, _, context in
            try limits.admitProviderCall(userID: try context.requireUser().id)
        }
        routes.on(
            .post, "me/payment-sheet",
            OpRoute(
                Ops.Orders.paymentSheet, tag: .rides,
                summary: "A rider's customer at the card provider and a new ephemeral key, for the provider's payment sheet in the app",
                errors: [403, 409, 429]),
            calling: platform, admit: providerCall)
        routes.on(
            .get, "me/cards",
            OpRoute(Ops.Orders.cards, tag: .rides, summary: "A rider's saved cards (the first is charged)", errors: [403, 409]),
            calling: platform)
        let app = "\(publicURL)/app/\(WebAppPage.App.rider.rawValue)"
        routes.on(
            .post, "me/cards/setup",
            RouteDoc(
                "The card provider's page where a rider adds a card (a Checkout Session in setup mode); it sends them back to the rider web app",
                tag: .rides,
                description:
                    "Open `url` in the browser: the card is typed on the provider's page, never sent to the platform; "
                    + "back at `/app/rider#card-added`, or `#card-cancelled`.",
                reply: CardSetup.self, "the page's address and when it expires", errors: [403, 409, 429], op: Ops.Orders.cardSetup.fullName)
        ) { request, context in
            try limits.admitProviderCall(userID: try context.requireUser().id)
            let params = CardSetupParams(
                caller: Caller(try context.requireUser()), successURL: app + "#card-added", cancelURL: app + "#card-cancelled")
            return try await platform.forward(Ops.Orders.cardSetup, params)
        }
        routes.on(
            .post, "me/payouts/onboarding",
            OpRoute(
                Ops.Orders.payoutOnboarding, tag: .drivers,
                summary: "A driver's payout account at the card provider and a link to finish its onboarding",
                errors: [403, 409, 429]), calling: platform, admit: providerCall)
        open.on(
            .post, "providers/stripe/webhook",
            RouteDoc(
                "Stripe's webhook endpoint: payment_intent.succeeded, payment_intent.payment_failed, account.updated", tag: .operators,
                description:
                    "The body is Stripe's event JSON as sent; the Stripe-Signature header (t=…,v1=…) must sign it with the endpoint secret within 5 minutes.",
                reply: ProviderWebhookReceipt.self, "the event taken, or seen before (duplicate)", errors: [400, 401, 409],
                op: Ops.Orders.providerWebhook.fullName)
        ) { request, _ in
            guard let signature = request.headers[HTTPField.Name("Stripe-Signature")!] else {
                throw GatewayError(.unauthorized, "missing_signature", "Stripe-Signature: required (t=<unix seconds>,v1=<hex HMAC-SHA256>)")
            }
            let buffer = try await request.body.collect(upTo: Self.webhookBodyLimit)
            guard let payload = String(validating: buffer.readableBytesView, as: UTF8.self) else {
                throw GatewayError(.badRequest, "invalid_event", "the body is not UTF-8 text")
            }
            return try await platform.forward(
                Ops.Orders.providerWebhook, ProviderWebhookParams(payload: payload, signature: signature), keyedBy: request)
        }
    }
}
