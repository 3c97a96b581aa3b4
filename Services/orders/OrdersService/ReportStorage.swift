import Foundation
import RideContract
import RideModels
import Storage

/// Ride reports, kept by both order stores beside the orders they are about.
public protocol ReportStorage: Sendable {
    func fileReport(_ report: RideReport) async throws
    /// Reports newest first, of one status or all.
    /// Newest first; with `userID`, only those on that person's rides (as rider or driver).
    func reports(status: ReportStatus?, userID: String?, limit: Int) async throws -> [RideReport]
    func report(id: String) async throws -> RideReport?
    /// Answers an open report and appends its `order.report_answered` event, in one transaction.
    func answerReport(id: String, answer: String, now: Date) async throws -> RideReport
    /// The statuses an order went through, oldest first: its `order.status` events in the outbox
    /// (read only for an operator looking at a report, so a scan of the outbox is affordable).
    func timeline(orderID: String) async throws -> [StatusStamp]
}

public enum ReportStoreFailure: Error, Equatable {
    case unknownReport
    case alreadyAnswered(RideReport)
}

enum ReportRows {
    /// `OrderStore.migrations`' reports table, in both stores.
    static let sql = """
        -- Problems riders and drivers reported about rides (orders.report), answered by operators.
        CREATE TABLE reports (
            id TEXT PRIMARY KEY NOT NULL,
            order_id TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at_ms INTEGER NOT NULL,
            document TEXT NOT NULL
        );
        CREATE INDEX reports_by_status ON reports (status, created_at_ms);
        """

    /// The answered report, or why it cannot be answered.
    static func answered(_ report: RideReport?, answer: String, now: Date) throws -> RideReport {
        guard var report else { throw ReportStoreFailure.unknownReport }
        guard report.status == .open else { throw ReportStoreFailure.alreadyAnswered(report) }
        report.status = .answered
        report.answer = answer
        report.answeredAt = now
        return report
    }

    /// What finds an order's status events in the outbox: its id as the event's order carries it
    /// (documents are written with sorted keys and no spaces; no other id has an order's `o-`).
    static func needle(orderID: String) -> String { #""id":"\#(orderID)""# }

    /// A stamp from a status event's topic (`order.status.ACCEPTED`) and time.
    static func stamp(topic: String, timeMS: Int64) -> StatusStamp? {
        guard let status = OrderStatus(rawValue: String(topic.dropFirst(Events.orderStatus.topic.count))) else { return nil }
        return StatusStamp(status: status, at: Date(timeIntervalSince1970: Double(timeMS) / 1000))
    }
}
