import Foundation
import Wire

/// `orders.payment_sheet`, `orders.cards`, `orders.payout_onboarding`: the caller only.
@WireModel
public struct CardOwnerParams: Codable, Sendable, Equatable {
    public var caller: Caller

    public init(caller: Caller) { self.caller = caller }
}

/// What a rider's app needs to show the card provider's payment sheet (AxRide's
/// `/api/ephemeral_keys`): the rider's customer at the provider and a short-lived key for it.
@WireModel
public struct PaymentSheet: Codable, Sendable, Equatable {
    public var provider: String
    public var customerID: String
    /// The ephemeral key's secret: the app's SDK reads and adds the customer's cards with it.
    public var ephemeralKey: String
    public var expiresAt: Date

    public init(provider: String, customerID: String, ephemeralKey: String, expiresAt: Date) {
        self.provider = provider
        self.customerID = customerID
        self.ephemeralKey = ephemeralKey
        self.expiresAt = expiresAt
    }
}

/// A rider's saved card, as the provider describes it (never the number).
@WireModel
public struct SavedCard: Codable, Sendable, Equatable {
    public var id: String
    public var brand: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int

    public init(id: String, brand: String, last4: String, expMonth: Int, expYear: Int) {
        self.id = id
        self.brand = brand
        self.last4 = last4
        self.expMonth = expMonth
        self.expYear = expYear
    }
}

/// `orders.cards`' reply: the cards a ride is charged to (the first one).
@WireModel
public struct SavedCards: Codable, Sendable, Equatable {
    public var cards: [SavedCard]

    public init(cards: [SavedCard]) { self.cards = cards }
}

/// `orders.card_setup`: the rider and where the provider's page sends them back — `success_url`
/// once a card is saved, `cancel_url` when they leave without one (the gateway fills both with
/// its web app's address).
@WireModel
public struct CardSetupParams: Codable, Sendable, Equatable {
    public var caller: Caller
    @WireField(maxLength: 2048)
    public var successURL: String
    @WireField(maxLength: 2048)
    public var cancelURL: String

    public init(caller: Caller, successURL: String, cancelURL: String) {
        self.caller = caller
        self.successURL = successURL
        self.cancelURL = cancelURL
    }
}

/// `orders.card_setup`' reply: the provider's own page where the rider types a card (a Stripe
/// Checkout Session in setup mode), so no card number passes through the platform.
@WireModel
public struct CardSetup: Codable, Sendable, Equatable {
    public var provider: String
    public var url: String
    public var expiresAt: Date

    public init(provider: String, url: String, expiresAt: Date) {
        self.provider = provider
        self.url = url
        self.expiresAt = expiresAt
    }
}

/// `orders.payout_onboarding`' reply: the driver's payout account at the provider and the page
/// where they finish it (AxRide's `/connectStripe`).
@WireModel
public struct PayoutOnboarding: Codable, Sendable, Equatable {
    public var provider: String
    public var accountID: String
    public var url: String
    /// Whether the provider pays out to the account yet.
    public var payoutsEnabled: Bool

    public init(provider: String, accountID: String, url: String, payoutsEnabled: Bool) {
        self.provider = provider
        self.accountID = accountID
        self.url = url
        self.payoutsEnabled = payoutsEnabled
    }
}

/// `orders.provider_webhook`: an event the payment provider posted, as received — the raw body
/// (its signature covers the exact bytes) and the signature header.
@WireModel
public struct ProviderWebhookParams: Codable, Sendable, Equatable {
    @WireField(maxLength: 262_144)
    public var payload: String
    @WireField(maxLength: 2048)
    public var signature: String

    public init(payload: String, signature: String) {
        self.payload = payload
        self.signature = signature
    }
}

/// `orders.provider_webhook`' reply: the event taken (or seen before: the provider retries).
@WireModel
public struct ProviderWebhookReceipt: Codable, Sendable, Equatable {
    public var eventID: String
    public var type: String
    public var duplicate: Bool

    public init(eventID: String, type: String, duplicate: Bool) {
        self.eventID = eventID
        self.type = type
        self.duplicate = duplicate
    }
}
