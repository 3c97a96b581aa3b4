import Foundation
import Logging
import PostgresNIO
import RideContract
import RideModels
import Storage
import Wire

extension PostgresOrderStore {
    public func fileReport(_ report: RideReport) async throws {
        let logger = storeLogger
        try await postgres.write { connection in
            try await connection.run(
                """
                INSERT INTO reports (id, order_id, status, created_at_ms, document)
                VALUES (\(report.id), \(report.orderID), \(report.status.rawValue), \(OrderRows.milliseconds(report.createdAt)), \(try JSONCoding.encodeText(report)))
                """, logger: logger)
        }
    }

    public func reports(status: ReportStatus?, userID: String?, limit: Int) async throws -> [RideReport] {
        let logger = storeLogger
        return try await postgres.read { connection in
            try await connection.all(
                """
                SELECT document FROM reports WHERE (\(status?.rawValue)::TEXT IS NULL OR status = \(status?.rawValue))
                  AND (\(userID)::TEXT IS NULL OR order_id IN (SELECT id FROM orders WHERE rider_id = \(userID) OR driver_id = \(userID)))
                ORDER BY created_at_ms DESC, id DESC LIMIT \(limit)
                """,
                as: String.self, logger: logger
            ).map { try JSONCoding.decode(RideReport.self, fromText: $0) }
        }
    }

    public func report(id: String) async throws -> RideReport? {
        let logger = storeLogger
        return try await postgres.read { connection in try await Self.report(connection, id: id, lock: false, logger: logger) }
    }

    public func answerReport(id: String, answer: String, now: Date) async throws -> RideReport {
        let logger = storeLogger
        return try await postgres.write { connection in
            // The row locked: two operators answering at once, the second is told it was answered.
            let report = try ReportRows.answered(
                try await Self.report(connection, id: id, lock: true, logger: logger), answer: answer, now: now)
            try await connection.run(
                "UPDATE reports SET status = \(report.status.rawValue), document = \(try JSONCoding.encodeText(report)) WHERE id = \(id)",
                logger: logger)
            try await PostgresOutbox.append(
                connection, Events.orderReportAnswered,
                data: ReportAnswered(report: report), time: now,
                logger: logger)
            return report
        }
    }

    public func timeline(orderID: String) async throws -> [StatusStamp] {
        let logger = storeLogger
        return try await postgres.read { connection in
            try await connection.all(
                "SELECT topic, time_ms FROM outbox WHERE topic LIKE 'order.status.%' AND strpos(data, \(ReportRows.needle(orderID: orderID))) > 0 ORDER BY sequence",
                as: (String, Int64).self, logger: logger
            ).compactMap { ReportRows.stamp(topic: $0.0, timeMS: $0.1) }
        }
    }

    private static func report(_ connection: PostgresConnection, id: String, lock: Bool, logger: Logger) async throws -> RideReport? {
        try await connection.first(
            "SELECT document FROM reports WHERE id = \(id)\(unescaped: lock ? " FOR UPDATE" : "")", as: String.self, logger: logger
        ).map { try JSONCoding.decode(RideReport.self, fromText: $0) }
    }
}
