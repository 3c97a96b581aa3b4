import Foundation
import Wire

// The params of the `notifications` ops, next to every other service's: the fuzzer (Fuzz/) decodes
// each op's params without linking the service.

/// `notifications.list`: a user's inbox, newest first.
@WireModel
public struct InboxParams: Codable, Sendable, Equatable {
    public var userID: String
    @WireField(minimum: 1, maximum: 500)
    public var limit: Int?
    public init(userID: String, limit: Int? = nil) {
        self.userID = userID
        self.limit = limit
    }
}

/// Which push service a phone's token belongs to: Apple's (APNs, an iPhone app's device token, hex)
/// or Firebase Cloud Messaging (an Android or iOS app's registration token).
@WireModel
public enum PushPlatform: String, Codable, Sendable, CaseIterable {
    case apns, fcm
}

/// `notifications.register_push_token`: a phone's token for one of the push services (FCM when
/// `platform` is absent: FCM addresses Android and iOS apps alike).
@WireModel
public struct PushTokenParams: Codable, Sendable, Equatable {
    public var userID: String
    @WireField(minLength: 1, maxLength: 4096)
    public var token: String
    public var platform: PushPlatform?
    public init(userID: String, token: String, platform: PushPlatform? = nil) {
        self.userID = userID
        self.token = token
        self.platform = platform
    }
}

/// `notifications.register_webhook`: without a secret, the service makes one (`whsec_`, Standard Webhooks).
@WireModel
public struct WebhookParams: Codable, Sendable, Equatable {
    public var url: String
    public var secret: String?
    public init(url: String, secret: String? = nil) {
        self.url = url
        self.secret = secret
    }
}

/// `notifications.delete_webhook`, `notifications.drop_previous_secret`.
@WireModel
public struct WebhookIDParams: Codable, Sendable, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// `notifications.rotate_webhook_secret`: a new secret (made by the service when absent); the one
/// it replaces keeps signing too for `keep_previous_s` seconds (a day when absent).
@WireModel
public struct RotateSecretParams: Codable, Sendable, Equatable {
    public var id: String
    public var secret: String?
    /// Up to 30 days; 0 stops signing with it at once.
    @WireField(minimum: 0, maximum: 2_592_000)
    public var keepPreviousS: Int?

    public init(id: String, secret: String? = nil, keepPreviousS: Int? = nil) {
        (self.id, self.secret, self.keepPreviousS) = (id, secret, keepPreviousS)
    }
}

/// `notifications.replay`: a dead letter sent again.
@WireModel
public struct DeliveryParams: Codable, Sendable, Equatable {
    public var deliveryID: Int64
    public init(deliveryID: Int64) { self.deliveryID = deliveryID }
}

/// `notifications.dead_letters`.
@WireModel
public struct DeadLettersParams: Codable, Sendable, Equatable {
    public var limit: Int?
    public init(limit: Int? = nil) { self.limit = limit }
}
