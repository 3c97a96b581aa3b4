import Bus
import Foundation
import GRDB
import RideModels
import Storage
import Testing

@testable import OrdersService

@Suite struct OrderStoreTests {
    static func order(id: String = "o1") -> Order {
        let time = Date(timeIntervalSince1970: 1_790_000_000)
        return Order(id: id, status: .new, rider: User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550100", createdAt: time),
                     pickup: Place(latitude: 47.1, longitude: 30.2, address: "Here \"quoted\""), dropoff: Place(latitude: 47.2, longitude: 30.3),
                     createdAt: time, updatedAt: time, offeredTo: ["d1", "d2"])
    }

    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("orders-\(UUID().uuidString).sqlite").path
    }

    @Test(arguments: [nil, OrderStatus.new, .startedRide])
    func anEventAroundTheStoredDocumentIsWhatEncodingTheChangeGives(previous: OrderStatus?) throws {
        var order = Self.order()
        order.status = .accepted
        let document = try JSONCoding.encode(order)
        let written = try JSONCoding.encode(EncodedStatusChange(document: document, previousStatus: previous))
        let expected = try JSONCoding.encode(OrderStatusChanged(order: order, previousStatus: previous))
        #expect(written == expected, "\(String(decoding: written, as: UTF8.self))")
    }

    /// The decoded-order cache never serves a state another writer has replaced (two instances on one file).
    @Test func aChangeByAnotherWriterIsSeenAndBuiltOn() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try OrderStore(path: path)
        let second = try OrderStore(path: path)
        try await first.create(Self.order())
        _ = try await first.order(id: "o1")  // cached by `first` at version 1

        let accepted = try await second.change(id: "o1") { $0.status = .accepted; $0.offeredTo = [] }
        #expect(accepted.order.version == 2)
        let seen = try await first.order(id: "o1")
        #expect(seen?.status == .accepted)
        #expect(seen?.version == 2)

        let cancelled = try await first.change(id: "o1") { $0.status = .cancelled }
        #expect(cancelled.previous == .accepted)
        #expect(cancelled.order.version == 3)
        let fromSecond = try await second.order(id: "o1")
        #expect(fromSecond?.status == .cancelled)
    }

    /// A change that throws stores nothing and leaves nothing in the cache.
    @Test func aRefusedChangeLeavesTheOrderAsItWas() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try OrderStore(path: path)
        try await store.create(Self.order())
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            _ = try await store.change(id: "o1") { order in
                order.status = .accepted
                throw Refused()
            }
        }
        let stored = try await store.order(id: "o1")
        #expect(stored == Self.order())
        let events = try await store.database.read { db in try Outbox.events(db, after: 0, limit: 10) }
        #expect(events.map(\.topic) == ["order.status.NEW"])
    }

    /// History pages: newest first, `limit` at a time, no ride twice or missed (two rides share a
    /// creation time: the id breaks the tie); open orders are not history; payments ride along, once.
    @Test func historyPagesThroughFinishedRidesAndPaymentsAreRecordedOnce() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try OrderStore(path: path)
        let base = Date(timeIntervalSince1970: 1_790_000_000)
        for index in 0..<5 {
            var order = Self.order(id: "o\(index)")
            order.createdAt = base.addingTimeInterval(Double(min(index, 3)))  // o3 and o4 at the same millisecond
            try await store.create(order)
            _ = try await store.change(id: order.id) { $0.status = index == 2 ? .cancelled : .completed }
        }
        try await store.create(Self.order(id: "open"))
        var seen: [String] = []
        var before: OrderStore.HistoryCursor?
        var pages = 0
        repeat {
            let page = try await store.history(of: .rider("r1"), before: before, limit: 2)
            seen += page.rides.map(\.order.id)
            before = page.nextBefore.flatMap(OrderStore.HistoryCursor.init)
            pages += 1
        } while before != nil && pages < 10
        #expect(seen == ["o4", "o3", "o2", "o1", "o0"], "newest first, each once")
        #expect(pages == 3)
        #expect(try await store.history(of: .driver("d9"), before: nil, limit: 10).rides.isEmpty)

        let payment = Payment(id: "pay-o1", orderID: "o1", riderID: "r1", driverID: "d1", provider: "ledger", providerReference: "ch-1", currency: "USD",
                              amountCents: 1000, driverEarningsCents: 800, commissionCents: 200, capturedAt: base)
        #expect(try await store.recordPayment(payment).recorded)
        var again = payment
        again.providerReference = "ch-2"
        let second = try await store.recordPayment(again)
        #expect(!second.recorded && second.payment == payment, "the first record stands")
        let paidEvents = try await store.database.read { db in try Outbox.events(db, after: 0, limit: 100) }.filter { $0.type == "order.paid" }
        #expect(paidEvents.count == 1)
        #expect(try await store.history(of: .rider("r1"), before: nil, limit: 10).rides.first { $0.order.id == "o1" }?.payment == payment)
        #expect(try await store.earnings(driverID: "d1", from: "2000-01-01") == [DriverEarnings.Day(day: UTCDay.string(base), rides: 1, faresCents: 1000, earningsCents: 800)])
    }
}
