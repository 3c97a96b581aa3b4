import Bus
import Foundation
import OrdersService
import RideModels
import Testing

/// Chat and rating rules, surge pricing, the ledger provider and payment capture, history cursors.
@Suite struct RideExtrasTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000)
    static let rider = User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: time)
    static let driver = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+380671234567", deviceID: "dan", createdAt: time)

    static func order(_ status: OrderStatus, driver: User? = RideExtrasTests.driver) -> Order {
        var order = Order(
            id: "o1", status: status, rider: rider, pickup: Place(latitude: 47, longitude: 35),
            dropoff: Place(latitude: 47.01, longitude: 35),
            createdAt: time, updatedAt: time)
        order.driver = status == .new ? nil : driver
        return order
    }

    @Test func onlyTheTwoPartiesChatAndOnlyWhileADriverIsOnTheOrder() {
        for status in OrderStatus.allCases {
            let order = Self.order(status)
            let rider = ConversationRules.recipient(of: .rider("r1"), on: order)
            let driver = ConversationRules.recipient(of: .driver("d1"), on: order)
            if status.hasDriver {
                #expect(rider == .success("d1") && driver == .success("r1"), "\(status)")
            } else {
                #expect(rider.isNotNow && (status == .new || driver.isNotNow), "\(status): closed")
            }
            #expect(ConversationRules.recipient(of: .rider("r2"), on: order) == .failure(.notAParty), "another rider, \(status)")
            #expect(ConversationRules.recipient(of: .driver("d2"), on: order) == .failure(.notAParty), "another driver, \(status)")
            #expect(ConversationRules.canRead(.rider("r1"), order))
            #expect(!ConversationRules.canRead(.driver("d2"), order) && !ConversationRules.canRead(.rider("r2"), order))
        }
        let message = { (text: String) in SendMessageParams(caller: .rider("r1"), id: "o1", text: text).ruleViolation }
        #expect(message(" \n ") == "text: must be more than spaces")
        #expect(message(String(repeating: "a", count: 2001)) == "text: must be at most 2000 characters")
        #expect(message("On my way 🚗") == nil)
        #expect(message("Here.\nBlue door.") == nil)
    }

    @Test func aLostItemReportReopensAFinishedRidesChatForItsTwoPartiesOnly() {
        for status in [OrderStatus.completed, .cancelled] {
            var order = Self.order(status)
            #expect(!ConversationRules.isOpen(order))
            order.chatReopenedAt = Self.time
            #expect(ConversationRules.isOpen(order))
            #expect(
                ConversationRules.recipient(of: .rider("r1"), on: order) == .success("d1")
                    && ConversationRules.recipient(of: .driver("d1"), on: order) == .success("r1"))
            #expect(ConversationRules.recipient(of: .rider("r2"), on: order) == .failure(.notAParty))
        }
        var noDriver = Self.order(.cancelled, driver: nil)
        noDriver.chatReopenedAt = Self.time
        #expect(!ConversationRules.isOpen(noDriver), "no one to talk to")
    }

    @Test func eachSideRatesTheOtherOnceAfterCompletion() {
        var order = Self.order(.completed)
        #expect(ConversationRules.ratee(of: .rider("r1"), on: order) == .success("d1"))
        #expect(ConversationRules.ratee(of: .driver("d1"), on: order) == .success("r1"))
        #expect(ConversationRules.ratee(of: .driver("d2"), on: order) == .failure(.notAParty))
        order.ratingByRider = RatingGiven(stars: 5, createdAt: Self.time)
        #expect(ConversationRules.ratee(of: .rider("r1"), on: order).isNotNow, "once")
        #expect(ConversationRules.ratee(of: .driver("d1"), on: order) == .success("r1"), "the other side still may")
        #expect(ConversationRules.ratee(of: .rider("r1"), on: Self.order(.reachedDropoff)).isNotNow, "not before COMPLETED")
        #expect(RateParams(caller: .rider("r1"), id: "o1", stars: 0).ruleViolation == "stars: must be from 1 to 5, got 0")
        #expect(RateParams(caller: .rider("r1"), id: "o1", stars: 6).ruleViolation != nil)
        #expect(
            RateParams(caller: .rider("r1"), id: "o1", stars: 3, comment: String(repeating: "x", count: 501)).ruleViolation
                == "comment: must be at most 500 characters")
        #expect(RateParams(caller: .rider("r1"), id: "o1", stars: 1, comment: "late").ruleViolation == nil)
    }

    @Test func surgeRisesWithWaitingOrdersPerAvailableDriverUpToTheMaximum() {
        let off = SurgePolicy()
        #expect(!off.isOn && off.multiplier(waitingOrders: 50, availableDrivers: 0) == 1)
        let surge = SurgePolicy(maximum: 2.5, radius: 2000, step: 0.5)
        #expect(surge.multiplier(waitingOrders: 1, availableDrivers: 3) == 1, "more drivers than orders")
        #expect(surge.multiplier(waitingOrders: 2, availableDrivers: 2) == 1)
        #expect(surge.multiplier(waitingOrders: 3, availableDrivers: 1) == 2.0, "1 + (3 - 1) × 0.5")
        #expect(surge.multiplier(waitingOrders: 3, availableDrivers: 2) == 1.3, "1 + 0.5 × 0.5, rounded to 0.1")
        #expect(surge.multiplier(waitingOrders: 9, availableDrivers: 0) == 2.5, "capped; no drivers counts as one")
        #expect(
            SurgePolicy(maximum: 11).problem != nil && SurgePolicy(maximum: 2, radius: 50).problem != nil
                && SurgePolicy(maximum: 2, step: 0).problem != nil)
        #expect(surge.problem == nil)
    }

    @Test func faresApplyTheSurgeAndKeepTheMinimum() {
        let fares = FareSchedule(currency: "USD", baseCents: 250, perKilometreCents: 120, perMinuteCents: 30, minimumCents: 500)
        #expect(fares.fareCents(metres: 5000, seconds: 600) == 1150, "250 + 5 × 120 + 10 × 30")
        #expect(fares.fareCents(metres: 5000, seconds: 600, surge: 1.5) == 1725)
        #expect(fares.fareCents(metres: 5000, seconds: 600, surge: 0.5) == 1150, "a surge below 1 counts as 1")
        #expect(fares.fareCents(metres: 100, seconds: 30, surge: 1.5) == 500, "(250 + 12 + 15) × 1.5 = 416: the minimum holds")
        #expect(fares.fareCents(metres: .nan, seconds: -5, surge: .infinity) == 500)
    }

    @Test func historyCursorsRoundTripAndRejectGarbage() {
        let cursor = HistoryCursor(createdAtMs: 1_790_000_000_123, id: "o-00ff")
        #expect(HistoryCursor(cursor.text) == cursor)
        for bad in ["", "abc", "12", "_o1", "12_", "x_o1", "1_" + String(repeating: "a", count: 65)] {
            #expect(HistoryCursor(bad) == nil, "\(bad)")
        }
        #expect(UTCDay.string(Date(timeIntervalSince1970: 1_790_000_000)) == "2026-09-21")
    }
}

extension Result where Failure == ConversationRules.Refusal {
    var isNotNow: Bool {
        if case .failure(.notNow) = self { return true }
        return false
    }
}
