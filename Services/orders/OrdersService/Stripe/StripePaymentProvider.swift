import Foundation
import Logging
import RideModels
import Storage
import Wire

/// What a provider with cards and payout accounts adds to charging: the apps' routes for the
/// payment sheet, saved cards and the driver's payout onboarding.
public protocol CardPaymentProvider: PaymentProvider {
    func paymentSheet(riderID: String) async throws -> PaymentSheet
    func cards(riderID: String) async throws -> SavedCards
    /// The provider's page where the rider adds a card, back to `successURL` or `cancelURL`.
    func cardSetup(riderID: String, successURL: String, cancelURL: String) async throws -> CardSetup
    func payoutOnboarding(driverID: String) async throws -> PayoutOnboarding
    /// An event the provider posted to its webhook endpoint; a `ServiceError` 400 when it is refused.
    func webhook(_ params: ProviderWebhookParams) async throws -> ProviderWebhookReceipt
    /// Records that a ride could not be charged (after `attempts`), for its payment and `ridectl status`.
    func recordFailure(orderID: String, reason: String, attempts: Int) async throws
    /// Forgets a ride's failure once it was charged after all.
    func clearFailure(orderID: String) async throws
    /// How many rides are not charged (failed, not yet charged again).
    func failedCharges() async throws -> Int
}

/// Charging through Stripe's API (or anything speaking it). A rider is a Customer, their cards
/// PaymentMethods their app adds with an ephemeral key; a driver is an Express Connect Account.
/// A completed ride is one *destination charge*: a PaymentIntent for the fare, confirmed off
/// session on the rider's first card, with `transfer_data[destination]` the driver's account and
/// `application_fee_amount` the platform's commission — Stripe moves the driver's share itself
/// (no separate Transfer). The order id keys the PaymentIntent, so a retried charge is the same one.
public final class StripePaymentProvider: CardPaymentProvider {
    public let name = "stripe"
    let client: StripeClient
    let ids: any StripeRecords
    /// Where Stripe's onboarding page sends the driver back (`return_url`) or for a new link (`refresh_url`).
    let onboardingReturnURL: String
    let webhooks: StripeWebhooks

    /// Keeping its records in `stripe.sqlite` at `idsPath`.
    public convenience init(client: StripeClient, idsPath: String, webhookSecret: String, onboardingReturnURL: String, logger: Logger)
        throws
    {
        self.init(
            client: client, ids: try StripeIDs(path: idsPath), webhookSecret: webhookSecret, onboardingReturnURL: onboardingReturnURL,
            logger: logger)
    }

    /// Keeping its records in PostgreSQL (schema `stripe`), beside orders there.
    public static func onPostgres(
        client: StripeClient, url: PostgresURL, webhookSecret: String, onboardingReturnURL: String, logger: Logger
    ) async throws -> StripePaymentProvider {
        let ids = try await PostgresStripeIDs.open(url: url, logger: logger)
        return StripePaymentProvider(
            client: client, ids: ids, webhookSecret: webhookSecret, onboardingReturnURL: onboardingReturnURL, logger: logger)
    }

    init(client: StripeClient, ids: any StripeRecords, webhookSecret: String, onboardingReturnURL: String, logger: Logger) {
        self.client = client
        self.ids = ids
        self.onboardingReturnURL = onboardingReturnURL
        self.webhooks = StripeWebhooks(secret: webhookSecret, ids: ids, logger: logger)
    }

    public func webhook(_ params: ProviderWebhookParams) async throws -> ProviderWebhookReceipt { try await webhooks.receive(params) }

    public func recordFailure(orderID: String, reason: String, attempts: Int) async throws {
        try await ids.recordFailure(orderID: orderID, reason: "\(reason) (\(attempts) attempt\(attempts == 1 ? "" : "s"))")
    }

    public func clearFailure(orderID: String) async throws { try await ids.clearFailure(orderID: orderID) }

    public func failedCharges() async throws -> Int { try await ids.failureCount() }

    public func charge(_ request: ChargeRequest) async throws -> ChargeReceipt {
        try await refusingPermanent {
            let customer = try await customer(riderID: request.payerID)
            let account = try await account(driverID: request.payeeID)
            guard
                let card = try await client.list("/v1/payment_methods", [("customer", customer), ("type", "card")]).first?["id"]?
                    .stringValue
            else {
                throw PaymentError.declined("rider \(request.payerID) has no saved card")
            }
            let intent = try await client.post(
                "/v1/payment_intents",
                [
                    ("amount", "\(request.amountCents)"), ("currency", request.currency.lowercased()), ("customer", customer),
                    ("payment_method", card),
                    ("confirm", "true"), ("off_session", "true"),
                    ("application_fee_amount", "\(request.amountCents - request.payeeShareCents)"),
                    ("transfer_data[destination]", account), ("metadata[order_id]", request.idempotencyKey),
                ], idempotencyKey: "order-\(request.idempotencyKey)-payment_intent" + (request.round > 0 ? "-retry\(request.round)" : ""))
            guard let id = intent["id"]?.stringValue, intent["status"] == "succeeded" else {
                throw PaymentError.declined(
                    "PaymentIntent \(intent["id"]?.stringValue ?? "?") is \(intent["status"]?.stringValue ?? "without a status")")
            }
            return ChargeReceipt(
                reference: id, capturedAt: Date(timeIntervalSince1970: intent["created"]?.numberValue ?? Date().timeIntervalSince1970))
        }
    }

    /// A Refund of the PaymentIntent, whole, taking the driver's share back from their account
    /// (`reverse_transfer`) and the platform's fee (`refund_application_fee`), as a destination
    /// charge's refund must.
    public func refund(_ request: RefundRequest) async throws -> ChargeReceipt {
        try await refusingPermanent {
            let refund = try await client.post(
                "/v1/refunds",
                [
                    ("payment_intent", request.chargeReference), ("reverse_transfer", "true"), ("refund_application_fee", "true"),
                    ("metadata[order_id]", request.idempotencyKey),
                ], idempotencyKey: "order-\(request.idempotencyKey)-refund")
            guard let id = refund["id"]?.stringValue, refund["status"] == "succeeded" || refund["status"] == "pending" else {
                throw PaymentError.declined(
                    "Refund \(refund["id"]?.stringValue ?? "?") is \(refund["status"]?.stringValue ?? "without a status")")
            }
            return ChargeReceipt(
                reference: id, capturedAt: Date(timeIntervalSince1970: refund["created"]?.numberValue ?? Date().timeIntervalSince1970))
        }
    }

    public func paymentSheet(riderID: String) async throws -> PaymentSheet {
        try await refusingPermanent {
            let customer = try await customer(riderID: riderID)
            // A new key each ask: the key is the app's to use for a while, never a retried request.
            let key = try await client.post(
                "/v1/ephemeral_keys", [("customer", customer)], idempotencyKey: "ephemeral_key-\(riderID)-\(UUID().uuidString)")
            guard let secret = key["secret"]?.stringValue, let expires = key["expires"]?.numberValue else {
                throw StripeError(status: 200, type: "api_error", message: "an ephemeral key without secret or expires")
            }
            return PaymentSheet(provider: name, customerID: customer, ephemeralKey: secret, expiresAt: Date(timeIntervalSince1970: expires))
        }
    }

    public func cards(riderID: String) async throws -> SavedCards {
        try await refusingPermanent {
            let customer = try await customer(riderID: riderID)
            let methods = try await client.list("/v1/payment_methods", [("customer", customer), ("type", "card")])
            return SavedCards(
                cards: methods.compactMap { method in
                    guard let id = method["id"]?.stringValue, let card = method["card"] else { return nil }
                    return SavedCard(
                        id: id, brand: card["brand"]?.stringValue ?? "unknown", last4: card["last4"]?.stringValue ?? "",
                        expMonth: Int(card["exp_month"]?.numberValue ?? 0), expYear: Int(card["exp_year"]?.numberValue ?? 0))
                })
        }
    }

    /// A Checkout Session in setup mode: Stripe's hosted page takes the card and attaches it to
    /// the rider's customer (newest first, so it is the one charged next).
    public func cardSetup(riderID: String, successURL: String, cancelURL: String) async throws -> CardSetup {
        try await refusingPermanent {
            let customer = try await customer(riderID: riderID)
            let session = try await client.post(
                "/v1/checkout/sessions",
                [
                    ("mode", "setup"), ("customer", customer), ("payment_method_types[0]", "card"), ("success_url", successURL),
                    ("cancel_url", cancelURL),
                    ("metadata[rider_id]", riderID),
                ], idempotencyKey: "checkout_session-\(riderID)-\(UUID().uuidString)")
            guard let url = session["url"]?.stringValue, let expires = session["expires_at"]?.numberValue else {
                throw StripeError(status: 200, type: "api_error", message: "a checkout session without url or expires_at")
            }
            return CardSetup(provider: name, url: url, expiresAt: Date(timeIntervalSince1970: expires))
        }
    }

    public func payoutOnboarding(driverID: String) async throws -> PayoutOnboarding {
        try await refusingPermanent {
            let account = try await account(driverID: driverID)
            let link = try await client.post(
                "/v1/account_links",
                [
                    ("account", account), ("refresh_url", onboardingReturnURL), ("return_url", onboardingReturnURL),
                    ("type", "account_onboarding"),
                ],
                idempotencyKey: "account_link-\(driverID)-\(UUID().uuidString)")
            let state = try await client.get("/v1/accounts/\(account)")
            return PayoutOnboarding(
                provider: name, accountID: account, url: link["url"]?.stringValue ?? "",
                payoutsEnabled: state["payouts_enabled"] == .bool(true))
        }
    }

    /// The rider's Customer, made on first use.
    func customer(riderID: String) async throws -> String {
        if let id = try await ids.id(of: "rider:\(riderID)") { return id }
        let customer = try await client.post(
            "/v1/customers", [("metadata[rider_id]", riderID)], idempotencyKey: "rider-\(riderID)-customer")
        return try await ids.remember(try objectID(customer), for: "rider:\(riderID)")
    }

    /// The driver's Express account (transfers requested), made on first use.
    func account(driverID: String) async throws -> String {
        if let id = try await ids.id(of: "driver:\(driverID)") { return id }
        let account = try await client.post(
            "/v1/accounts", [("type", "express"), ("capabilities[transfers][requested]", "true"), ("metadata[driver_id]", driverID)],
            idempotencyKey: "driver-\(driverID)-account")
        return try await ids.remember(try objectID(account), for: "driver:\(driverID)")
    }

    func objectID(_ object: JSONValue) throws -> String {
        guard let id = object["id"]?.stringValue else {
            throw StripeError(status: 200, type: "api_error", message: "an object without an id")
        }
        return id
    }

    /// Stripe's refusals that a retry cannot change (a declined card, a request Stripe finds
    /// invalid) become `PaymentError.declined`; the rest (connection, 429, 5xx) stay retryable.
    func refusingPermanent<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as StripeError where !error.isRetryable {
            throw PaymentError.declined(error.description)
        }
    }
}
