import Bus
import Foundation
import Geo
import RideModels
import Storage
import Testing
import Wire

@testable import OrdersService

/// The orders store's rules, the same on SQLite and PostgreSQL — including what several writers
/// at once (instances on one database) must not break.
@Suite struct OrderStorageTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000)

    static func order(
        id: String = "o1", rider: String = "r1", at place: Place = Place(latitude: 47.1, longitude: 30.2, address: "Here \"quoted\"")
    ) -> Order {
        Order(
            id: id, status: .new, rider: User(id: rider, role: .rider, name: "Ann", phoneNumber: "+15550100", createdAt: time),
            pickup: place, dropoff: Place(latitude: 47.2, longitude: 30.3), createdAt: time, updatedAt: time, offeredTo: ["d1", "d2"])
    }

    /// The store on `backend`, closed (PostgreSQL) when `body` ends.
    func withStore(_ backend: Backend, _ body: (any OrderStorage) async throws -> Void) async throws {
        try await withBackend(
            backend, sqlite: { try OrderStore(path: $0) }, postgres: { try await PostgresOrderStore.open(url: $0, logger: testLogger) },
            body)
    }

    func events(_ store: any OrderStorage) async throws -> [CloudEvent<JSONValue>] {
        try await store.eventLog.page(source: "orders", query: EventsQuery(after: 0, limit: 1000)).events
    }

    @Test(arguments: Backend.allCases)
    func aRefusedChangeLeavesTheOrderAsItWas(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.create(Self.order())
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                _ = try await store.change(id: "o1") { order in
                    order.status = .accepted
                    throw Refused()
                }
            }
            #expect(try await store.order(id: "o1") == Self.order())
            #expect(try await events(store).map(\.type) == ["order.status"])
            await #expect(throws: OrderStoreFailure.unknownOrder) { _ = try await store.change(id: "nope") { $0.status = .cancelled } }
        }
    }

    /// A ride's share id is kept with the order and finds it; no event goes out for it.
    @Test(arguments: Backend.allCases)
    func anOrderIsFoundByItsShareID(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.create(Self.order())
            #expect(try await store.order(shareID: "Abc2345") == nil)
            _ = try await store.change(id: "o1") { $0.shareID = "Abc2345" }
            let found = try await store.order(shareID: "Abc2345")
            let byID = try await store.order(id: "o1")
            #expect(found?.id == "o1" && found?.shareID == "Abc2345" && found == byID)
            #expect(try await store.order(shareID: "abc2345") == nil, "case counts")
            #expect(try await events(store).map(\.type) == ["order.status"], "sharing is no status change")
        }
    }

    /// Ten changes at once to one order: each applied on the one before (no lost update), each with its version.
    @Test(arguments: Backend.allCases)
    func concurrentChangesToOneOrderAreAppliedInTurn(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await writingAgainWhileUnavailable { try await store.create(Self.order()) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<10 {
                    // A 503 (a loaded machine's slow database) is written again, as a caller would; one
                    // at the deadline may have committed, so the change is one that, done again, changes nothing.
                    group.addTask {
                        _ = try await writingAgainWhileUnavailable {
                            try await store.change(id: "o1") { order in
                                if !order.offeredTo.contains("x\(n)") { order.offeredTo.append("x\(n)") }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let order = try #require(try await store.order(id: "o1"))
            #expect(order.version == Self.order().version + 10)
            #expect(Set(order.offeredTo) == Set(["d1", "d2"] + (0..<10).map { "x\($0)" }))
            #expect(try await store.orders(driverID: "x7", status: nil, limit: 10).map(\.id) == ["o1"], "offers follow the document")
        }
    }

    /// One open order per rider, even when creates race (two instances, one rider's double tap).
    @Test(arguments: Backend.allCases)
    func oneOpenOrderPerRiderWhateverTheRace(backend: Backend) async throws {
        try await withStore(backend) { store in
            let results = await withTaskGroup(of: Result<String, any Error>.self) { group in
                for n in 0..<6 {
                    group.addTask {
                        do {
                            try await store.create(Self.order(id: "race\(n)"))
                            return .success("race\(n)")
                        } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let created = results.compactMap { try? $0.get() }
            #expect(created.count == 1)
            for case .failure(let error) in results { #expect(error as? OrderStoreFailure == .openOrderExists(created[0])) }
            _ = try await store.change(id: created[0]) { $0.status = .cancelled }
            try await store.create(Self.order(id: "after"))  // a finished order does not count
            #expect(try await store.orders(riderID: "r1", status: nil, limit: 10).count == 2)
            #expect(try await store.orders(riderID: "r1", status: .new, limit: 10).map(\.id) == ["after"])
        }
    }

    /// One open order per driver: a driver with a ride in progress cannot accept another, even
    /// when the accepts race (two instances); once the ride is over they can.
    @Test(arguments: Backend.allCases)
    func oneOpenOrderPerDriverWhateverTheRace(backend: Backend) async throws {
        try await withStore(backend) { store in
            let ids = (0..<4).map { "o\($0)" }
            for (n, id) in ids.enumerated() { try await store.create(Self.order(id: id, rider: "r\(n)")) }
            let dan = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", createdAt: Self.time)
            let results = await withTaskGroup(of: Result<String, any Error>.self) { group in
                for id in ids {
                    group.addTask {
                        do {
                            _ = try await store.change(id: id) {
                                $0.status = .accepted
                                $0.driver = dan
                                $0.offeredTo = []
                            }
                            return .success(id)
                        } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let accepted = results.compactMap { try? $0.get() }
            #expect(accepted.count == 1)
            for case .failure(let error) in results {
                #expect(error as? OrderStoreFailure == .driverBusy(driver: "d1", openOrder: accepted[0]))
            }
            for id in ids where id != accepted[0] { #expect(try await store.order(id: id)?.status == .new, "refused: unchanged") }
            #expect(try await store.driversWithOpenOrders(among: ["d1", "d2"]) == ["d1"])
            // Changes to the ride itself go on; a finished ride frees the driver.
            _ = try await store.change(id: accepted[0]) { $0.status = .pickingUp }
            _ = try await store.change(id: accepted[0]) { $0.status = .cancelled }
            #expect(try await store.driversWithOpenOrders(among: ["d1", "d2"]) == [])
            let next = try #require(ids.first { $0 != accepted[0] })
            #expect(
                try await store.change(id: next) {
                    $0.status = .accepted
                    $0.driver = dan
                }.order.driver?.id == "d1")
            #expect(try await store.driversWithOpenOrders(among: []) == [])
        }
    }

    @Test(arguments: Backend.allCases)
    func queriesByDriverPlaceAndStatus(backend: Backend) async throws {
        try await withStore(backend) { store in
            let center = GeoPoint(latitude: 47.0, longitude: 30.0)
            // 0.001° of latitude ≈ 111 m.
            for (n, offset) in [0.001, 0.005, 0.02, 0.2].enumerated() {
                var order = Self.order(id: "n\(n)", rider: "r\(n)", at: Place(latitude: 47.0 + offset, longitude: 30.0))
                order.createdAt = Self.time.addingTimeInterval(Double(n))
                try await store.create(order)
            }
            #expect(
                try await store.orders(status: .new, near: center, radius: 3000, offeredTo: nil, limit: 10).map(\.id) == [
                    "n0", "n1", "n2",
                ], "nearest first, within 3 km")
            #expect(try await store.orders(status: .new, near: center, radius: 3000, offeredTo: nil, limit: 2).map(\.id) == ["n0", "n1"])
            #expect(
                try await store.orders(status: .new, near: center, radius: 3000, offeredTo: "d1", limit: 10).map(\.id) == [
                    "n0", "n1", "n2",
                ])
            #expect(
                try await store.orders(status: .new, near: center, radius: 3000, offeredTo: "d9", limit: 10).isEmpty,
                "offered to another driver")
            #expect(try await store.waitingOrders(near: center, radius: 1000) == 2)
            #expect(try await store.newOrders(limit: 10).map(\.id) == ["n0", "n1", "n2", "n3"], "oldest first")
            _ = try await store.change(id: "n1") {
                $0.status = .accepted
                $0.offeredTo = []
            }
            #expect(try await store.orders(status: .accepted, near: center, radius: 3000, offeredTo: nil, limit: 10).map(\.id) == ["n1"])
            #expect(
                try await store.orders(driverID: "d1", status: .new, limit: 10).map(\.id) == ["n3", "n2", "n0"], "offered, newest first")
            let stats = try await store.stats(openLimit: 2)
            #expect(stats.byStatus == ["NEW": 3, "ACCEPTED": 1])
            #expect(stats.open.count == 2)
        }
    }

    /// Messages are numbered 1, 2, 3… per order, however many are sent at once.
    @Test(arguments: Backend.allCases)
    func chatMessagesAreNumberedOnceEachUnderConcurrency(backend: Backend) async throws {
        try await withStore(backend) { store in
            try await store.create(Self.order())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<8 {
                    group.addTask {
                        _ = try await store.appendMessage(orderID: "o1") { order, number in
                            ChatMessage(
                                id: "m\(n)", orderID: order.id, number: number, senderID: "r1", senderRole: .rider, recipientID: "d1",
                                text: "hello \(n)", sentAt: Self.time)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let messages = try await store.messages(orderID: "o1", after: 0, limit: 100)
            #expect(messages.map(\.number) == Array(1...8))
            #expect(Set(messages.map(\.text)).count == 8)
            #expect(try await store.messages(orderID: "o1", after: 6, limit: 1).map(\.number) == [7])
            #expect(try await events(store).filter { $0.type == "order.message" }.count == 8)
            await #expect(throws: OrderStoreFailure.unknownOrder) {
                _ = try await store.appendMessage(orderID: "nope") { _, _ in
                    Issue.record("made for no order")
                    throw OrderStoreFailure.unknownOrder
                }
            }
        }
    }

    /// History pages: newest first, `limit` at a time, no ride twice or missed (two rides share a
    /// creation time: the id breaks the tie); open orders are not history; payments ride along, once.
    @Test(arguments: Backend.allCases)
    func historyPagesThroughFinishedRidesAndPaymentsAreRecordedOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            let base = Self.time
            for index in 0..<5 {
                var order = Self.order(id: "o\(index)")
                order.createdAt = base.addingTimeInterval(Double(min(index, 3)))  // o3 and o4 at the same millisecond
                try await store.create(order)
                _ = try await store.change(id: order.id) { $0.status = index == 2 ? .cancelled : .completed }
            }
            try await store.create(Self.order(id: "open"))
            var seen: [String] = []
            var before: HistoryCursor?
            var pages = 0
            repeat {
                let page = try await store.history(of: .rider("r1"), before: before, limit: 2)
                seen += page.rides.map(\.order.id)
                before = page.nextBefore.flatMap(HistoryCursor.init)
                pages += 1
            } while before != nil && pages < 10
            #expect(seen == ["o4", "o3", "o2", "o1", "o0"], "newest first, each once")
            #expect(pages == 3)
            #expect(try await store.history(of: .driver("d9"), before: nil, limit: 10).rides.isEmpty)

            let payment = Payment(
                id: "pay-o1", orderID: "o1", riderID: "r1", driverID: "d1", provider: "ledger", providerReference: "ch-1", currency: "USD",
                amountCents: 1000, driverEarningsCents: 800, commissionCents: 200, capturedAt: base)
            var again = payment
            again.providerReference = "ch-2"
            // Two instances recording at once: one record, one event.
            async let first = store.recordPayment(payment)
            async let second = store.recordPayment(again)
            let records = try await [first, second]
            #expect(records.filter(\.recorded).count == 1)
            #expect(records[0].payment == records[1].payment, "the first record stands for both")
            #expect(try await events(store).filter { $0.type == "order.paid" }.count == 1)
            #expect(try await store.payment(orderID: "o1") == records[0].payment)
            #expect(
                try await store.history(of: .rider("r1"), before: nil, limit: 10).rides.first { $0.order.id == "o1" }?.payment
                    == records[0].payment)
            #expect(
                try await store.earnings(driverID: "d1", from: "2000-01-01")
                    == [DriverEarnings.Day(day: UTCDay.string(base), rides: 1, faresCents: 1000, earningsCents: 800)])
        }
    }

    @Test(arguments: Backend.allCases)
    func theLedgerChargesOncePerKeyInBooksThatBalance(backend: Backend) async throws {
        let file = TemporaryFile()
        let ledger: any LedgerBooksProvider
        var close: () -> Void = {}
        switch backend {
        case .sqlite: ledger = try LedgerPaymentProvider(path: file.path)
        case .postgres:
            let postgres = try await PostgresLedgerPaymentProvider.open(url: try await freshPostgres(), logger: testLogger)
            (ledger, close) = (postgres, { postgres.postgres.close() })
        }
        defer { close() }
        let request = ChargeRequest(
            idempotencyKey: "o1", payerID: "r1", payeeID: "d1", currency: "USD", amountCents: 1725,
            payeeShareCents: PaymentCapture.driverShare(of: 1725, commissionPercent: 20))
        #expect(request.payeeShareCents == 1380)
        // Instances charging one order at once: one charge, one receipt for all.
        let receipts = try await withThrowingTaskGroup(of: ChargeReceipt.self) { group in
            for _ in 0..<4 { group.addTask { try await ledger.charge(request) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(receipts.map(\.reference)).count == 1, "the same key returns the first receipt")
        var changed = request
        changed.amountCents = 2000
        await #expect(throws: PaymentError.keyReused("o1")) { try await ledger.charge(changed) }
        #expect(try await ledger.chargeCount() == 1, "nothing charged twice")
        #expect(try await ledger.balance("rider:r1") == -1725)
        #expect(try await ledger.balance("driver:d1") == 1380)
        #expect(try await ledger.balance("platform") == 345)
        // A refund reverses the three entries once, however many ask; a charge not in the books is refused.
        let refund = RefundRequest(idempotencyKey: "o1", chargeReference: receipts[0].reference, charge: request)
        let refunds = try await withThrowingTaskGroup(of: ChargeReceipt.self) { group in
            for _ in 0..<3 { group.addTask { try await ledger.refund(refund) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(refunds.map(\.reference)).count == 1 && refunds[0].reference.hasPrefix("re-"))
        for account in ["rider:r1", "driver:d1", "platform"] { #expect(try await ledger.balance(account) == 0, "\(account)") }
        var unknown = refund
        unknown.idempotencyKey = "o2"
        await #expect(throws: PaymentError.self) { try await ledger.refund(unknown) }
    }
}

extension PostgresOrderStore: PostgresBacked {}
