import Foundation
import GRDB
import RideContract
import RideModels
import Storage
import Wire

extension OrderStore {
    public func fileReport(_ report: RideReport) async throws {
        try await database.write { db in
            try db.run(
                "INSERT INTO reports (id, order_id, status, created_at_ms, document) VALUES (?, ?, ?, ?, ?)",
                [
                    report.id, report.orderID, report.status.rawValue, OrderRows.milliseconds(report.createdAt),
                    try JSONCoding.encodeText(report),
                ])
        }
    }

    public func reports(status: ReportStatus?, userID: String?, limit: Int) async throws -> [RideReport] {
        try await database.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT document FROM reports WHERE (? IS NULL OR status = ?)
                      AND (? IS NULL OR order_id IN (SELECT id FROM orders WHERE rider_id = ? OR driver_id = ?))
                    ORDER BY created_at_ms DESC, id DESC LIMIT ?
                    """,
                arguments: [status?.rawValue, status?.rawValue, userID, userID, userID, limit]
            ).map { try JSONCoding.decode(RideReport.self, fromText: $0) }
        }
    }

    public func report(id: String) async throws -> RideReport? {
        try await database.read { db in try Self.report(db, id: id) }
    }

    public func answerReport(id: String, answer: String, now: Date) async throws -> RideReport {
        try await database.write { db in
            let report = try ReportRows.answered(try Self.report(db, id: id), answer: answer, now: now)
            try db.run(
                "UPDATE reports SET status = ?, document = ? WHERE id = ?", [report.status.rawValue, try JSONCoding.encodeText(report), id])
            try Outbox.append(
                db, Events.orderReportAnswered, data: ReportAnswered(report: report),
                time: now)
            return report
        }
    }

    public func timeline(orderID: String) async throws -> [StatusStamp] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT topic, time_ms FROM outbox WHERE topic LIKE 'order.status.%' AND instr(CAST(data AS TEXT), ?) > 0 ORDER BY sequence",
                arguments: [ReportRows.needle(orderID: orderID)]
            ).compactMap { ReportRows.stamp(topic: $0["topic"], timeMS: $0["time_ms"]) }
        }
    }

    private static func report(_ db: Database, id: String) throws -> RideReport? {
        try String.fetchOne(db, sql: "SELECT document FROM reports WHERE id = ?", arguments: [id]).map {
            try JSONCoding.decode(RideReport.self, fromText: $0)
        }
    }
}
