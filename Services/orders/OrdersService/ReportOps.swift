import Bus
import Foundation
import RideContract
import RideModels
import Storage
import Wire

/// Ride reports: a rider or driver reports a problem with their ride (`report`); operators list
/// them with the ride's timeline (`reports`) and answer them (`answer_report`: the event tells
/// notifications, which tells the reporter). A lost item reopens a finished ride's chat and puts
/// the report in it, so rider and driver can arrange its return.
struct ReportOps {
    let orders: OrdersOps

    var store: any OrderStorage { orders.store }

    func register(on router: inout OpRouter) {
        router.on(Ops.Orders.report) { (params: ReportParams, _) -> Replied<RideReport> in
            Replied(status: Status.created, body: try await report(params))
        }
        // For operators (the dashboard, ridectl), like `stats`: no caller.
        router.on(Ops.Orders.reports) { (query: ReportsQuery, _) -> RideReports in
            let reports = try await store.reports(status: query.status, userID: query.userID, limit: query.limit ?? 50)
            var rides: [ReportedRide] = []
            for report in reports {
                rides.append(
                    ReportedRide(
                        report: report, order: try await store.order(id: report.orderID),
                        timeline: try await store.timeline(orderID: report.orderID)))
            }
            return RideReports(reports: rides)
        }
        router.on(Ops.Orders.answerReport) { (params: AnswerReportParams, _) -> RideReport in
            do {
                let report = try await store.answerReport(id: params.id, answer: params.answer, now: Date())
                orders.relay.notify()
                return report
            } catch ReportStoreFailure.unknownReport {
                throw ServiceError.notFound("unknown_report", "no report with id \(params.id.prefix(64))")
            } catch ReportStoreFailure.alreadyAnswered(let report) {
                throw ServiceError.conflict(
                    "already_answered", "report \(report.id) was answered at \(report.answeredAt.map { RFC3339.format($0) } ?? "?")")
            }
        }
    }

    func report(_ params: ReportParams) async throws -> RideReport {
        let order = try await orders.existing(params.id)
        guard ConversationRules.isParty(params.caller, order) else {
            throw orders.forbidden("only the rider and the driver of order \(order.id) report on it")
        }
        let now = Date()
        var generator = SystemRandomNumberGenerator()
        let report = RideReport(
            id: "rp-" + String(format: "%016llx", generator.next() as UInt64), orderID: order.id, reporterID: params.caller.id,
            reporterRole: params.caller.role,
            category: params.category, text: params.text, photoURL: params.photoURL, createdAt: now)
        try await store.fileReport(report)
        if params.category == .lostItem, order.driver != nil {
            try await putInTouch(report, order: order, now: now)
        }
        orders.relay.notify()
        return report
    }

    /// A lost item: the chat of a finished ride opens again and the report is its next message,
    /// from the reporter to the other party (who is notified of it as of any message).
    func putInTouch(_ report: RideReport, order: Order, now: Date) async throws {
        if !ConversationRules.isOpen(order) {
            _ = try await store.change(id: order.id, now: now, sideEvents: { _, _ in [] }) { order in
                if order.chatReopenedAt == nil { order.chatReopenedAt = now }
            }
        }
        let caller = Caller(role: report.reporterRole, id: report.reporterID)
        _ = try await store.appendMessage(orderID: order.id, now: now) { order, number in
            guard case .success(let recipient) = ConversationRules.recipient(of: caller, on: order) else {
                throw ServiceError.conflict("not_now", "the chat of order \(order.id) is closed")
            }
            return ChatMessage(
                id: "\(order.id)-m\(number)", orderID: order.id, number: number, senderID: caller.id, senderRole: caller.role,
                recipientID: recipient,
                text: "Lost item reported: \(report.text)", sentAt: now)
        }
    }
}
