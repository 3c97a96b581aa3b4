import Bus
import Foundation
import RideContract
import RideModels
import Storage
import Testing
import Wire

@testable import OrdersService

/// Ride reports and an order's timeline, the same on SQLite and PostgreSQL.
@Suite struct ReportStorageTests {
    let time = OrderStorageTests.time

    @Test(arguments: Backend.allCases)
    func reportsAreListedNewestFirstAnsweredOnceWithTheirEventAndTimelinesComeFromStatusEvents(backend: Backend) async throws {
        try await OrderStorageTests().withStore(backend) { store in
            try await store.create(OrderStorageTests.order(id: "o-1"))
            try await store.create(OrderStorageTests.order(id: "o-2", rider: "r2"))
            _ = try await store.change(id: "o-1", now: time.addingTimeInterval(5), sideEvents: { _, _ in [] }) { $0.status = .cancelled }
            let first = RideReport(
                id: "rp-1", orderID: "o-1", reporterID: "r1", reporterRole: .rider, category: .fare, text: "Too much", createdAt: time)
            var second = RideReport(
                id: "rp-2", orderID: "o-2", reporterID: "r2", reporterRole: .rider, category: .lostItem, text: "Umbrella",
                createdAt: time.addingTimeInterval(1))
            second.photoURL = PhotoRules.path(sha256: String(repeating: "a", count: 64))
            try await store.fileReport(first)
            try await store.fileReport(second)
            #expect(try await store.reports(status: nil, userID: nil, limit: 10) == [second, first])
            #expect(try await store.reports(status: .open, userID: nil, limit: 1) == [second])
            #expect(try await store.reports(status: nil, userID: "r2", limit: 10) == [second], "the reports on r2's rides")
            #expect(try await store.reports(status: nil, userID: "r", limit: 10).isEmpty, "an id's prefix finds nothing")

            let answered = try await store.answerReport(id: "rp-1", answer: "Refunded", now: time.addingTimeInterval(9))
            #expect(answered.status == .answered && answered.answer == "Refunded" && answered.answeredAt == time.addingTimeInterval(9))
            #expect(try await store.report(id: "rp-1") == answered)
            #expect(try await store.reports(status: .answered, userID: nil, limit: 10) == [answered])
            await #expect(throws: ReportStoreFailure.alreadyAnswered(answered)) {
                try await store.answerReport(id: "rp-1", answer: "again", now: time)
            }
            await #expect(throws: ReportStoreFailure.unknownReport) { try await store.answerReport(id: "rp-9", answer: "x", now: time) }
            let events = try await store.eventLog.page(source: "orders", query: EventsQuery(after: 0, limit: 100)).events
            #expect(
                events.filter { $0.type == Events.orderReportAnswered.type }.map { $0.data["report"]?["id"] } == ["rp-1"],
                "one event, for the one answer")

            #expect(try await store.timeline(orderID: "o-1").map(\.status) == [.new, .cancelled])
            #expect(try await store.timeline(orderID: "o-1").last?.at == time.addingTimeInterval(5))
            #expect(try await store.timeline(orderID: "o-2").map(\.status) == [.new])
            #expect(try await store.timeline(orderID: "o-").isEmpty, "an id's prefix finds nothing")
        }
    }
}
