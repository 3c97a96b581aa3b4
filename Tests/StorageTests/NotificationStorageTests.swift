import Bus
import Foundation
import RideModels
import Storage
import Testing
import Wire

@testable import NotificationsService

/// The notifications store's rules, the same on SQLite and PostgreSQL — and, on PostgreSQL, with
/// two instances on one database.
@Suite struct NotificationStorageTests {
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    /// Deliveries are due from the moment they are recorded (the wall clock): a claim's "now" a
    /// little after that finds them due.
    func soon() -> Date { Date().addingTimeInterval(1) }

    /// The store on `backend`, closed (PostgreSQL) when `body` ends.
    func withStore(_ backend: Backend, _ body: (any NotificationStorage) async throws -> Void) async throws {
        try await withInstances(backend) { first, _ in try await body(first) }
    }

    /// Two instances of the store on one database. On SQLite, where one process keeps the file,
    /// both are the same store: its concurrent calls are what must not interfere.
    func withInstances(_ backend: Backend, _ body: (any NotificationStorage, any NotificationStorage) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let file = TemporaryFile()
            let store = try NotificationStore(path: file.path)
            try await body(store, store)
        case .postgres:
            let url = try await freshPostgres()
            let first = try await PostgresNotificationStore.open(url: url, logger: testLogger)
            defer { first.postgres.close() }
            let second = try await PostgresNotificationStore.open(url: url, logger: testLogger)
            defer { second.postgres.close() }
            try await body(first, second)
        }
    }

    func note(_ id: String, user: String, at seconds: TimeInterval = 0) -> UserNotification {
        UserNotification(
            id: id, userID: user, kind: "test", title: "Title \(id)", body: "Body", orderID: "o1",
            createdAt: time.addingTimeInterval(seconds))
    }

    func webhook(_ id: String, at seconds: TimeInterval = 0) -> Webhook {
        Webhook(id: id, url: "http://127.0.0.1:9/\(id)", secret: "secret-of-\(id)-0123456789", createdAt: time.addingTimeInterval(seconds))
    }

    func events(_ store: any NotificationStorage) async throws -> [CloudEvent<JSONValue>] {
        try await store.eventLog.page(source: BusContract.Service.notifications, query: EventsQuery(after: 0, limit: 500)).events
    }

    @Test(arguments: Backend.allCases)
    func anEventRecordedTwiceYieldsItsNotificationsCommandsAndDeliveryOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addWebhook(webhook("w1"))
            let notifications = [note("o1/driver_assigned/r1", user: "r1"), note("o1/other/d1", user: "d1")]
            let command = AddressedDeviceCommand(deviceID: "phone-1", command: .startTracking)
            let body = Array(#"[{"type":"order"}]"#.utf8)
            let added = try await store.record(
                eventID: "orders/7", notifications: notifications, commands: [command], webhookBody: body,
                rider: (order: "o1", rider: "r1"))
            #expect(added == notifications)
            let replayed = try await store.record(
                eventID: "orders/7", notifications: notifications, commands: [command], webhookBody: body,
                rider: (order: "o1", rider: "r2"))
            #expect(replayed.isEmpty, "a replayed event adds no notification")
            let published = try await events(store)
            #expect(
                published.map(\.type) == ["notification", "notification", "device.command"],
                "and no event: the phone's tracking is not restarted")
            #expect(published[0].data["id"] == "o1/driver_assigned/r1")
            #expect(published[2].data["command"] == "start_tracking")
            #expect(published[2].data["device_id"] == nil, "the device is named by the topic, as the contract's payload says")
            #expect(try await store.rider(of: "o1") == "r1", "the first rider kept")
            #expect(try await store.rider(of: "o2") == nil)
            let later = soon()
            let (deliveries, _) = try await store.claimDueDeliveries(now: later, lease: .seconds(30), limit: 10)
            #expect(deliveries.count == 1, "one delivery per webhook and event")
            let delivery = try #require(deliveries.first)
            #expect(
                (delivery.webhookID, delivery.eventID, delivery.url, delivery.status, delivery.attempts) == (
                    "w1", "orders/7", "http://127.0.0.1:9/w1", "pending", 0
                ))
            #expect(delivery.body == #"[{"type":"order"}]"#)
            #expect(delivery.secret == webhook("w1").secret)

            // Another event naming a stored notification: only its new one counts, and its commands go out.
            let next = try await store.record(
                eventID: "orders/8", notifications: [notifications[0], note("o1/third/r1", user: "r1")],
                commands: [command], webhookBody: nil, rider: nil)
            #expect(next.map(\.id) == ["o1/third/r1"])
            #expect(try await events(store).count == 5)
        }
    }

    @Test(arguments: Backend.allCases)
    func theInboxIsNewestFirstAndLimited(backend: Backend) async throws {
        try await withStore(backend) { store in
            let notes = [
                note("n1", user: "u1", at: 10), note("n3", user: "u1", at: 30), note("n2", user: "u1", at: 20),
                note("m1", user: "u2", at: 40), note("n4a", user: "u1", at: 30),
            ]
            _ = try await store.record(eventID: "e1", notifications: notes, commands: [], webhookBody: nil, rider: nil)
            #expect(try await store.inbox(userID: "u1", limit: 10).map(\.id) == ["n3", "n4a", "n2", "n1"], "newest first, ties by id")
            #expect(try await store.inbox(userID: "u1", limit: 2).map(\.id) == ["n3", "n4a"])
            #expect(try await store.inbox(userID: "u1", limit: 1) == [notes[1]], "the whole notification back")
            #expect(try await store.inbox(userID: "u2", limit: 10).map(\.id) == ["m1"])
            #expect(try await store.inbox(userID: "nobody", limit: 10).isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func pushTokensAreKeptOnceEachAndMoveWithThePhone(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addPushToken(userID: "u1", token: "t1", platform: .fcm)
            try await store.addPushToken(userID: "u1", token: "t1", platform: .apns)
            try await store.addPushToken(userID: "u1", token: "t2", platform: .fcm)
            try await store.addPushToken(userID: "u2", token: "t3", platform: .fcm)
            #expect(try await store.pushTokens(userID: "u1").sorted() == ["t1", "t2"])
            // The phone of t2 is signed in as u2 now: its pushes are u2's.
            try await store.addPushToken(userID: "u2", token: "t2", platform: .fcm)
            #expect(try await store.pushTokens(userID: "u1") == ["t1"])
            #expect(try await store.pushTokens(userID: "u2").sorted() == ["t2", "t3"])
            #expect(try await store.pushTokens(userID: "u3").isEmpty)
        }
    }

    /// The push outbox: one push per new notification and token, in `record`'s transaction; claimed
    /// once until its lease ends; retried when due; a removed token's pending pushes die with it.
    @Test(arguments: Backend.allCases)
    func pushesWaitInTheOutboxUntilSentRetriedOrTheirTokenGoes(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addPushToken(userID: "u1", token: "phone", platform: .apns)
            try await store.addPushToken(userID: "u1", token: "tablet", platform: .fcm)
            _ = try await store.record(
                eventID: "e1", notifications: [note("n1", user: "u1"), note("m1", user: "u2")], commands: [], webhookBody: nil, rider: nil)
            _ = try await store.record(eventID: "e1", notifications: [note("n1", user: "u1")], commands: [], webhookBody: nil, rider: nil)
            let now = Date()
            let (claimed, lease) = try await store.claimDuePushes(now: now, lease: .seconds(30), limit: 10)
            #expect(
                claimed.map(\.token).sorted() == ["phone", "tablet"],
                "one per token of the user, none for a user without one, none for a replay")
            #expect(
                Set(claimed.map(\.platform)) == [.apns, .fcm] && claimed.allSatisfy { $0.notification.id == "n1" && $0.status == "pending" }
            )
            #expect(try await store.claimDuePushes(now: now, lease: .seconds(30), limit: 10).pushes.isEmpty, "claimed until the lease ends")
            let phone = try #require(claimed.first { $0.token == "phone" })
            let tablet = try #require(claimed.first { $0.token == "tablet" })
            try await store.finishPush(phone.id, lease: lease, sent: true, error: nil, retryAt: nil)
            try await store.finishPush(
                tablet.id, lease: lease, sent: false, error: "fcm 429 QUOTA_EXCEEDED", retryAt: now.addingTimeInterval(1))
            try await store.finishPush(tablet.id, lease: lease, sent: true, error: nil, retryAt: nil)  // a stale lease: changes nothing
            let again = try await store.claimDuePushes(now: now.addingTimeInterval(2), lease: .seconds(30), limit: 10)
            #expect(
                again.pushes.map(\.id) == [tablet.id] && again.pushes.first?.attempts == 1
                    && again.pushes.first?.lastError == "fcm 429 QUOTA_EXCEEDED")
            try await store.removePushToken("tablet", reason: "fcm 404 UNREGISTERED")
            #expect(try await store.pushTokens(userID: "u1") == ["phone"])
            let pushes = try await store.pushes(userID: "u1", limit: 10)
            #expect(
                pushes.map(\.status).sorted() == ["dead", "sent"]
                    && pushes.first { $0.token == "tablet" }?.lastError == "fcm 404 UNREGISTERED")
            _ = try await store.record(eventID: "e2", notifications: [note("n2", user: "u1")], commands: [], webhookBody: nil, rider: nil)
            #expect(
                try await store.claimDuePushes(now: now.addingTimeInterval(60), lease: .seconds(30), limit: 10).pushes.map(\.token) == [
                    "phone"
                ])
        }
    }

    /// A phone's pushes go one at a time, oldest first (a retried one holds the later back), and
    /// what was queued for a phone's last user dies when the phone signs in as someone else.
    @Test(arguments: Backend.allCases)
    func aPhonesPushesGoOneAtATimeInOrderAndStayWithTheirUser(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addPushToken(userID: "u1", token: "phone", platform: .fcm)
            try await store.addPushToken(userID: "u1", token: "tablet", platform: .fcm)
            for id in ["n1", "n2", "n3"] {
                _ = try await store.record(eventID: id, notifications: [note(id, user: "u1")], commands: [], webhookBody: nil, rider: nil)
            }
            let now = Date()
            let first = try await store.claimDuePushes(now: now, lease: .seconds(30), limit: 10)
            #expect(
                first.pushes.map(\.notification.id) == ["n1", "n1"] && Set(first.pushes.map(\.token)) == ["phone", "tablet"],
                "each phone's oldest only")
            #expect(
                try await store.claimDuePushes(now: now, lease: .seconds(30), limit: 10).pushes.isEmpty, "the later ones wait for the first"
            )
            let phone = try #require(first.pushes.first { $0.token == "phone" })
            try await store.finishPush(
                phone.id, lease: first.leaseEnd, sent: false, error: "fcm 503 UNAVAILABLE", retryAt: now.addingTimeInterval(5))
            #expect(
                try await store.claimDuePushes(now: now.addingTimeInterval(1), lease: .seconds(30), limit: 10).pushes.isEmpty,
                "n2 does not overtake n1's retry")
            let retried = try await store.claimDuePushes(now: now.addingTimeInterval(6), lease: .seconds(30), limit: 10)
            #expect(retried.pushes.map(\.id) == [phone.id])
            try await store.finishPush(phone.id, lease: retried.leaseEnd, sent: true, error: nil, retryAt: nil)
            let next = try await store.claimDuePushes(now: now.addingTimeInterval(7), lease: .seconds(30), limit: 10)
            #expect(next.pushes.map(\.notification.id) == ["n2"] && next.pushes.first?.token == "phone")
            // The tablet signs in as u2: u1's n2 and n3, still queued for it, are not sent to u2's tablet.
            try await store.addPushToken(userID: "u2", token: "tablet", platform: .fcm)
            let tablets = try await store.pushes(userID: "u1", limit: 10).filter { $0.token == "tablet" }
            #expect(tablets.count == 3 && tablets.allSatisfy { $0.status == "dead" && $0.lastError == "token moved" }, "\(tablets)")
            let later = try await store.claimDuePushes(now: now.addingTimeInterval(60), lease: .seconds(30), limit: 10)
            #expect(later.pushes.map(\.token) == ["phone"], "n2's lease ended; nothing for the tablet")
        }
    }

    @Test(arguments: Backend.allCases)
    func webhooksAreAddedListedAndDeletedWithTheirPendingDeliveries(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addWebhook(webhook("w2", at: 5))
            try await store.addWebhook(webhook("w1", at: 1))
            #expect(try await store.webhooks() == [webhook("w1", at: 1), webhook("w2", at: 5)], "oldest first, every field back")
            _ = try await store.record(eventID: "e1", notifications: [], commands: [], webhookBody: Array("[]".utf8), rider: nil)
            #expect(try await store.deleteWebhook(id: "w1"))
            #expect(!(try await store.deleteWebhook(id: "w1")), "gone already")
            #expect(try await store.webhooks().map(\.id) == ["w2"])
            let later = soon()
            let (due, _) = try await store.claimDueDeliveries(now: later, lease: .seconds(30), limit: 10)
            #expect(due.map(\.webhookID) == ["w2"], "the deleted webhook's pending delivery went with it")
        }
    }

    @Test(arguments: Backend.allCases)
    func aRotatedSecretKeepsThePreviousOneUntilItsTimeOrItsDrop(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addWebhook(webhook("w1"))
            _ = try await store.record(eventID: "e1", notifications: [], commands: [], webhookBody: Array("[]".utf8), rider: nil)
            let until = Date().addingTimeInterval(3600)
            let rotated = try await store.rotateSecret(webhookID: "w1", secret: "whsec_new", previousUntil: until)
            #expect(rotated?.secret == "whsec_new")
            #expect(abs((rotated?.previousSecretExpiresAt?.timeIntervalSince1970 ?? 0) - until.timeIntervalSince1970) < 0.01)
            #expect(try await store.webhooks() == [rotated].compactMap { $0 }, "listed as rotated")
            let (due, lease) = try await store.claimDueDeliveries(now: soon(), lease: .seconds(30), limit: 10)
            #expect(due.map(\.secret) == ["whsec_new"])
            #expect(due.map(\.previousSecret) == ["secret-of-w1-0123456789"], "the previous secret signs too, until its time")
            try await store.finishAttempt(due[0].id, lease: lease, delivered: false, error: "HTTP 500", retryAt: Date())

            let dropped = try await store.dropPreviousSecret(webhookID: "w1")
            #expect(dropped?.secret == "whsec_new" && dropped?.previousSecretExpiresAt == nil)
            #expect(
                try await store.claimDueDeliveries(now: soon(), lease: .seconds(30), limit: 10).deliveries.map(\.previousSecret) == [nil])

            _ = try await store.rotateSecret(webhookID: "w1", secret: "whsec_newer", previousUntil: Date().addingTimeInterval(-1))
            #expect(try await store.webhooks().first?.previousSecretExpiresAt == nil, "a time already over: not signing")
            #expect(try await store.delivery(id: due[0].id)?.previousSecret == nil)
            #expect(try await store.rotateSecret(webhookID: "nobody", secret: "whsec_x", previousUntil: until) == nil)
            #expect(try await store.dropPreviousSecret(webhookID: "nobody") == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func deliveriesAreClaimedLeasedFinishedAndReplayed(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.addWebhook(webhook("w1"))
            for n in 1...3 {
                _ = try await store.record(eventID: "e\(n)", notifications: [], commands: [], webhookBody: Array("[\(n)]".utf8), rider: nil)
            }
            let later = soon()
            let first = try await store.claimDueDeliveries(now: later, lease: .seconds(30), limit: 2)
            #expect(first.deliveries.map(\.eventID) == ["e1", "e2"], "oldest first, up to the limit")
            #expect(first.leaseEnd == NotificationRows.milliseconds(later) + 30_000)
            let second = try await store.claimDueDeliveries(now: later, lease: .seconds(30), limit: 10)
            #expect(second.deliveries.map(\.eventID) == ["e3"], "the claimed ones are not due while leased")
            #expect(
                try await store.claimDueDeliveries(now: later.addingTimeInterval(29), lease: .seconds(30), limit: 10).deliveries.isEmpty)

            // The lease ran out (the sender died): due again, under a new lease.
            let again = try await store.claimDueDeliveries(now: later.addingTimeInterval(31), lease: .seconds(30), limit: 10)
            #expect(again.deliveries.map(\.eventID) == ["e1", "e2", "e3"])
            let (e1, e2, e3) = (again.deliveries[0].id, again.deliveries[1].id, again.deliveries[2].id)
            try await store.finishAttempt(e1, lease: first.leaseEnd, delivered: true, error: nil, retryAt: nil)
            #expect(try await store.delivery(id: e1)?.status == "pending", "an attempt that outlived its lease changes nothing")
            #expect(try await store.delivery(id: e1)?.attempts == 0)

            try await store.finishAttempt(e1, lease: again.leaseEnd, delivered: true, error: nil, retryAt: nil)
            try await store.finishAttempt(
                e2, lease: again.leaseEnd, delivered: false, error: "HTTP 500", retryAt: later.addingTimeInterval(100))
            try await store.finishAttempt(e3, lease: again.leaseEnd, delivered: false, error: "timed out", retryAt: nil)
            let delivered = try #require(try await store.delivery(id: e1))
            #expect((delivered.status, delivered.attempts, delivered.lastError) == ("delivered", 1, nil))
            let retried = try #require(try await store.delivery(id: e2))
            #expect((retried.status, retried.attempts, retried.lastError) == ("pending", 1, "HTTP 500"))
            #expect(
                try await store.claimDueDeliveries(now: later.addingTimeInterval(99), lease: .seconds(30), limit: 10).deliveries.isEmpty,
                "not before its retry time")
            let retry = try await store.claimDueDeliveries(now: later.addingTimeInterval(100), lease: .seconds(30), limit: 10)
            #expect(retry.deliveries.map(\.id) == [e2])
            #expect(retry.deliveries.first?.attempts == 1)
            try await store.finishAttempt(e2, lease: nil, delivered: false, error: "HTTP 502", retryAt: nil)
            #expect(try await store.delivery(id: e2)?.status == "dead", "without a lease the attempt is recorded whatever the claim")

            #expect(try await store.deadLetters(limit: 10).map(\.id) == [e3, e2], "newest first")
            #expect(try await store.deadLetters(limit: 1).map(\.id) == [e3])
            #expect(try await store.deadLetters(limit: 10).first?.lastError == "timed out")
            #expect(try await store.replay(deliveryID: e3))
            let replayed = try #require(try await store.delivery(id: e3))
            #expect((replayed.status, replayed.attempts, replayed.lastError) == ("pending", 0, nil))
            #expect(!(try await store.replay(deliveryID: e3)), "no longer dead")
            #expect(!(try await store.replay(deliveryID: e1)), "delivered, not dead")
            #expect(!(try await store.replay(deliveryID: 999_999)))
            #expect(try await store.delivery(id: 999_999) == nil)
            #expect(try await store.deadLetters(limit: 10).map(\.id) == [e2])
            let due = try await store.claimDueDeliveries(now: Date().addingTimeInterval(1), lease: .seconds(30), limit: 10)
            #expect(due.deliveries.map(\.id) == [e3], "a replayed delivery is due at once")
        }
    }

    /// Every delivery `store` can claim at `now`, `limit` at a time. A claim refused 503 under the
    /// machine's load is asked again, as a sender would (`writingAgainWhileUnavailable`).
    func claimingAll(_ store: any NotificationStorage, at now: Date, limit: Int) async throws -> [Int64] {
        var ids: [Int64] = []
        while true {
            let batch = try await writingAgainWhileUnavailable {
                try await store.claimDueDeliveries(now: now, lease: .seconds(60), limit: limit).deliveries
            }
            if batch.isEmpty { return ids }
            ids += batch.map(\.id)
        }
    }

    /// Two instances sending webhooks at once: every delivery claimed once, none twice.
    @Test(arguments: Backend.allCases)
    func twoClaimersAtOnceNeverGetTheSameDelivery(backend: Backend) async throws {
        try await withInstances(backend) { first, second in
            try await first.addWebhook(webhook("w1"))
            try await first.addWebhook(webhook("w2", at: 1))
            for n in 1...30 {
                _ = try await first.record(eventID: "e\(n)", notifications: [], commands: [], webhookBody: Array("[\(n)]".utf8), rider: nil)
            }
            let later = soon()
            var claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for (index, store) in [first, second, first, second].enumerated() {
                    group.addTask { try await claimingAll(store, at: later, limit: 1 + index) }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            // A claim the database took but did not answer in time leased its deliveries to nobody:
            // they come back when the leases end, as they would to another instance (normally none).
            let leasedToNobody = try await claimingAll(first, at: later.addingTimeInterval(61), limit: 60).filter { !claimed.contains($0) }
            claimed += leasedToNobody
            #expect(claimed.count == 60, "every delivery claimed")
            #expect(Set(claimed).count == claimed.count, "none claimed twice")
        }
    }

    /// Two instances handling the same events at once (both follow orders): one set of rows, one
    /// set of events. Events that share a notification must not deadlock each other.
    @Test(arguments: Backend.allCases)
    func concurrentRecordsOfOneEventStoreItOnce(backend: Backend) async throws {
        try await withInstances(backend) { first, second in
            try await first.addWebhook(webhook("w1"))
            let eventCount = 15
            // The shared one first in some events and last in others: each order once makes two events wait for each other.
            func notifications(_ n: Int) -> [UserNotification] {
                let own = [note("o\(n)/a/r\(n)", user: "r\(n)"), note("o\(n)/b/d1", user: "d1")]
                let shared = note("shared/offer/d2", user: "d2")
                return n.isMultiple(of: 2) ? [shared] + own : own + [shared]
            }
            let added = try await withThrowingTaskGroup(of: [UserNotification].self) { group in
                for n in 1...eventCount {
                    for store in [first, second] {
                        group.addTask {
                            try await writingAgainWhileUnavailable {
                                try await store.record(
                                    eventID: "orders/\(n)", notifications: notifications(n),
                                    commands: [AddressedDeviceCommand(deviceID: "phone-\(n)", command: .startTracking)],
                                    webhookBody: Array("[\(n)]".utf8), rider: (order: "o\(n)", rider: "r\(n)"))
                            }
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            // A write refused 503 at its deadline may still have committed: its retry then adds
            // nothing, so the replies can tell fewer than were added — never more. What was
            // stored and published is checked exactly below.
            #expect(added.count <= eventCount * 2 + 1 && added.count > 0, "each notification added once")
            #expect(Set(added.map(\.id)).count == added.count)
            let published = try await events(second)
            #expect(published.filter { $0.type == "notification" }.count == eventCount * 2 + 1)
            #expect(published.filter { $0.type == "device.command" }.count == eventCount, "one command per event")
            #expect(try await second.inbox(userID: "d1", limit: 500).count == eventCount)
            #expect(try await second.inbox(userID: "d2", limit: 500).map(\.id) == ["shared/offer/d2"])
            let later = soon()
            let deliveries = try await second.claimDueDeliveries(now: later, lease: .seconds(30), limit: 500).deliveries
            #expect(deliveries.count == eventCount, "one delivery per event")
            #expect(Set(deliveries.map(\.eventID)).count == eventCount)
            #expect(try await first.rider(of: "o3") == "r3")
        }
    }

    /// Several instances starting at once on an empty database: the schema is made once.
    @Test func instancesStartingTogetherShareOneSchema() async throws {
        let url = try await freshPostgres()
        let stores = try await withThrowingTaskGroup(of: PostgresNotificationStore.self) { group in
            for _ in 0..<3 { group.addTask { try await PostgresNotificationStore.open(url: url, logger: testLogger) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        defer { for store in stores { store.postgres.close() } }
        try await stores[0].addWebhook(webhook("w1"))
        _ = try await stores[1].record(eventID: "e1", notifications: [], commands: [], webhookBody: Array("[]".utf8), rider: nil)
        _ = try await stores[2].record(eventID: "e2", notifications: [], commands: [], webhookBody: Array("[]".utf8), rider: nil)
        let later = soon()
        let ids = try await stores[2].claimDueDeliveries(now: later, lease: .seconds(30), limit: 10).deliveries.map(\.id)
        #expect(ids.count == 2 && ids[0] < ids[1], "deliveries numbered by the database, in order")
    }
}
