import Bus
import Foundation
import Providers
import RideContract
import RideModels
import Storage

/// The `notifications` service's ops on the broker.
struct NotificationsOps {
    let store: any NotificationStorage
    let sender: WebhookSender
    /// Secrets are stored sealed; a reply carries them open (the caller's own webhooks).
    let secrets: WebhookSecretSealing

    func router(instance: String) -> OpRouter {
        var router = OpRouter(service: BusContract.Service.notifications, instance: instance)
        router.on(Ops.Notifications.list) { (params: InboxParams, _) -> Inbox in
            try Self.check(id: params.userID, "user_id")
            return Inbox(notifications: try await store.inbox(userID: params.userID, limit: params.limit ?? 50))
        }
        router.on(Ops.Notifications.registerPushToken) { (params: PushTokenParams, _) -> Done in
            try Self.check(id: params.userID, "user_id")
            let platform = params.platform ?? .fcm
            if let problem = PushTokenRules.problem(with: params.token, platform: platform) {
                throw ServiceError.unprocessable("invalid_params", problem)
            }
            try await store.addPushToken(userID: params.userID, token: params.token, platform: platform)
            return Done()
        }
        router.on(Ops.Notifications.registerWebhook) { (params: WebhookParams, _) -> Replied<Webhook> in
            guard let url = URL(string: params.url), url.scheme == "http" || url.scheme == "https", url.host != nil,
                params.url.utf8.count <= 2000
            else {
                throw ServiceError.unprocessable("invalid_params", "url: must be an http:// or https:// URL")
            }
            let secret = try Self.secret(params.secret)
            var webhook = Webhook(
                id: "wh-" + UUID().uuidString.lowercased().prefix(12), url: params.url, secret: try secrets.seal(secret), createdAt: Date())
            try await store.addWebhook(webhook)
            webhook.secret = secret
            return Replied(status: Status.created, body: webhook)
        }
        router.on(Ops.Notifications.listWebhooks) { (_: NoParams, _) -> Webhooks in
            Webhooks(webhooks: try await store.webhooks().map { try secrets.open($0) })
        }
        router.on(Ops.Notifications.deleteWebhook) { (params: WebhookIDParams, _) -> Done in
            guard try await store.deleteWebhook(id: params.id) else { throw Self.unknown(params.id) }
            return Done()
        }
        router.on(Ops.Notifications.rotateWebhookSecret) { (params: RotateSecretParams, _) -> Webhook in
            let secret = try Self.secret(params.secret)
            let until = Date().addingTimeInterval(Double(params.keepPreviousS ?? 86_400))
            guard let webhook = try await store.rotateSecret(webhookID: params.id, secret: try secrets.seal(secret), previousUntil: until)
            else {
                throw Self.unknown(params.id)
            }
            return try secrets.open(webhook)
        }
        router.on(Ops.Notifications.dropPreviousSecret) { (params: WebhookIDParams, _) -> Webhook in
            guard let webhook = try await store.dropPreviousSecret(webhookID: params.id) else { throw Self.unknown(params.id) }
            return try secrets.open(webhook)
        }
        router.on(Ops.Notifications.deadLetters) { (params: DeadLettersParams, _) -> DeadLetters in
            DeadLetters(deliveries: try await store.deadLetters(limit: params.limit ?? 50))
        }
        router.on(Ops.Notifications.replay) { (params: DeliveryParams, _) -> WebhookDelivery in
            guard try await store.replay(deliveryID: params.deliveryID) else {
                if try await store.delivery(id: params.deliveryID) == nil {
                    throw ServiceError.notFound("unknown_delivery", "no delivery \(params.deliveryID)")
                }
                throw ServiceError.conflict("not_dead", "delivery \(params.deliveryID) is not in the dead letters")
            }
            sender.notify()
            guard let delivery = try await store.delivery(id: params.deliveryID) else {
                throw ServiceError.notFound("unknown_delivery", "no delivery \(params.deliveryID)")
            }
            return delivery
        }
        router.on(Ops.Notifications.events) { (query: EventsQuery, _) -> EventsPage in
            try await store.eventLog.page(source: BusContract.Service.notifications, query: query)
        }
        return router
    }

    /// A secret given (checked) or a new one.
    static func secret(_ given: String?) throws -> String {
        guard let given else { return StandardWebhook.newSecret() }
        if let problem = StandardWebhook.problem(with: given) { throw ServiceError.unprocessable("invalid_params", problem) }
        return given
    }

    static func unknown(_ webhookID: String) -> ServiceError {
        ServiceError.notFound("unknown_webhook", "no webhook \(webhookID.prefix(40))")
    }

    static func check(id: String, _ field: String) throws {
        guard (1...128).contains(id.utf8.count) else {
            throw ServiceError.unprocessable("invalid_params", "\(field): must be 1 to 128 bytes")
        }
    }
}
