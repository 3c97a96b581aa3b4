import Foundation
import Wire

// The notifications service's wire types: what its ops answer and what it publishes.

/// A message for one user, as stored in their inbox and published on `notification.<user_id>`.
@WireModel
public struct UserNotification: Codable, Sendable, Equatable {
    /// Made from what it is about (`<order>/<kind>/<user>`), so a replayed event adds nothing.
    public var id: String
    public var userID: String
    public var kind: String
    public var title: String
    public var body: String
    public var orderID: String?
    public var createdAt: Date

    public init(id: String, userID: String, kind: String, title: String, body: String, orderID: String? = nil, createdAt: Date) {
        (self.id, self.userID, self.kind, self.title, self.body, self.orderID, self.createdAt) = (
            id, userID, kind, title, body, orderID, createdAt
        )
    }
}

/// An operator's webhook: every order and trip event, signed with its secret (and, during a
/// rotation, with the previous one too).
@WireModel
public struct Webhook: Codable, Sendable, Equatable {
    public var id: String
    public var url: String
    public var secret: String
    public var createdAt: Date
    /// Until when deliveries are also signed with the secret before the last rotation; nil when they are not.
    public var previousSecretExpiresAt: Date?

    public init(id: String, url: String, secret: String, createdAt: Date, previousSecretExpiresAt: Date? = nil) {
        (self.id, self.url, self.secret, self.createdAt, self.previousSecretExpiresAt) = (
            id, url, secret, createdAt, previousSecretExpiresAt
        )
    }
}

/// One event on its way to one webhook.
@WireModel
public struct WebhookDelivery: Codable, Sendable, Equatable {
    public var id: Int64
    public var webhookID: String
    public var url: String
    public var eventID: String
    public var status: String
    public var attempts: Int
    public var lastError: String?
    public var body: String
    /// The webhook's secret, to sign the body with; never on the wire.
    public var secret: String = ""
    /// The secret before the last rotation, while it is still valid; never on the wire.
    public var previousSecret: String? = nil

    /// Declared to leave the secrets out; the other keys are their names in snake_case.
    enum CodingKeys: String, CodingKey {
        case id, url, status, attempts, body
        case webhookID = "webhook_id"
        case eventID = "event_id"
        case lastError = "last_error"
    }

    public init(
        id: Int64, webhookID: String, url: String, eventID: String, status: String, attempts: Int, lastError: String?, body: String,
        secret: String,
        previousSecret: String? = nil
    ) {
        (
            self.id, self.webhookID, self.url, self.eventID, self.status, self.attempts, self.lastError, self.body, self.secret,
            self.previousSecret
        ) =
            (id, webhookID, url, eventID, status, attempts, lastError, body, secret, previousSecret)
    }
}

/// A user's inbox, newest first.
@WireModel
public struct Inbox: Codable, Sendable, Equatable {
    public var notifications: [UserNotification]
    public init(notifications: [UserNotification]) { self.notifications = notifications }
}

/// The webhooks an operator registered.
@WireModel
public struct Webhooks: Codable, Sendable, Equatable {
    public var webhooks: [Webhook]
    public init(webhooks: [Webhook]) { self.webhooks = webhooks }
}

/// Deliveries that ran out of attempts.
@WireModel
public struct DeadLetters: Codable, Sendable, Equatable {
    public var deliveries: [WebhookDelivery]
    public init(deliveries: [WebhookDelivery]) { self.deliveries = deliveries }
}

/// The reply of an op that only does something.
@WireModel
public struct Done: Codable, Sendable, Equatable {
    public var ok: Bool = true
    public init() {}
}
