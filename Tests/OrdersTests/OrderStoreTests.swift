import Bus
import Foundation
import GRDB
import RideModels
import Storage
import Testing
import Wire

@testable import OrdersService

@Suite struct OrderStoreTests {
    static func order(id: String = "o1") -> Order {
        let time = Date(timeIntervalSince1970: 1_790_000_000)
        return Order(
            id: id, status: .new, rider: User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550100", createdAt: time),
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

        let accepted = try await second.change(id: "o1") {
            $0.status = .accepted
            $0.offeredTo = []
        }
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
}
