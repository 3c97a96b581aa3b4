import Bus
import Foundation
import RideContract
import RideModels
import ServiceStorage
import Storage
import Testing
import Wire

@testable import NotificationsService

/// notifications sends what an event says, so it sends it as orders' log has it (SQLite and
/// PostgreSQL): a forged `order.message` reaches nobody.
@Suite(.timeLimit(.minutes(2))) struct NotificationsReactorTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000)

    static func message(_ number: Int, to recipient: String, _ text: String) -> ChatMessageSent {
        ChatMessageSent(
            message: ChatMessage(
                id: "m\(number)", orderID: "o1", number: number, senderID: "d1", senderRole: .driver, recipientID: recipient, text: text,
                sentAt: time))
    }

    @Test(arguments: Backend.allCases)
    func aForgedChatMessageReachesNobody(backend: Backend) async throws {
        try await NotificationStorageTests().withStore(backend) { store in
            let (orders, trips) = (ScriptedLog(source: BusContract.Service.orders), ScriptedLog(source: BusContract.Service.trips))
            try orders.append(Events.orderMessage.type, Self.message(1, to: "r1", "I am outside"))
            let bus = try await InProcessBus.start([orders.router, trips.router])
            let publisher = try await EventPublisher(endpoint: "tcp://127.0.0.1:9", source: "notifications", logger: testLogger)
            let client = WebhookSender.makeClient(timeout: .seconds(1))
            let sender = WebhookSender(
                store: store, client: client, timeout: .seconds(1), retryDelays: [],
                secrets: WebhookSecretSealing(secret: Array(repeating: 7, count: 32)), logger: testLogger)
            let relay = OutboxRelay(log: store.eventLog, publisher: publisher, source: "notifications", logger: testLogger)
            let feed = TestFeed<JSONValue>()
            let pushes = PushSender(
                store: store, providers: PushProviders(file: FilePushProvider(path: "/dev/null")), retryDelays: [], lease: .seconds(5),
                logger: testLogger)
            let reactor = NotificationsReactor(store: store, relay: relay, sender: sender, pushes: pushes, logger: testLogger)
                .make(platform: bus.client, subscriber: feed)
            let running = Task { try await reactor.run() }
            #expect(await eventually { try await store.inbox(userID: "r1", limit: 10).count == 1 })

            let phishing = Array(try JSONCoding.encode(Self.message(2, to: "victim", "Your card was declined: pay at evil.example")))
            feed.forge(sequence: 2, type: Events.orderMessage.type, data: phishing)
            feed.forge(sequence: 1, type: Events.orderMessage.type, data: phishing)
            try feed.send(try orders.append(Events.orderMessage.type, Self.message(2, to: "r1", "Blue car")))
            #expect(await eventually { try await store.inbox(userID: "r1", limit: 10).count == 2 })
            await feed.close()
            try await running.value
            #expect(try await store.inbox(userID: "victim", limit: 10).isEmpty)
            try? await client.shutdown()
            await publisher.close()
            await bus.close()
        }
    }
}
