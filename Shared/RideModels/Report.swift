import Foundation
import Wire

/// What a ride report is about.
@WireModel
public enum ReportCategory: String, Codable, Sendable, CaseIterable {
    case lostItem = "lost_item"
    case safety, fare, driver, other
}

@WireModel
public enum ReportStatus: String, Codable, Sendable, CaseIterable {
    case open, answered
}

/// A problem a rider or driver reported about a ride, and the operator's answer.
@WireModel
public struct RideReport: Codable, Sendable, Equatable {
    public var id: String
    public var orderID: String
    public var reporterID: String
    public var reporterRole: UserRole
    public var category: ReportCategory
    public var text: String
    /// A photo uploaded first (`PUT /v1/me/photo`'s `photo_url`, or any stored photo's path).
    public var photoURL: String?
    public var status: ReportStatus
    public var answer: String?
    public var answeredAt: Date?
    public var createdAt: Date

    public init(
        id: String, orderID: String, reporterID: String, reporterRole: UserRole, category: ReportCategory, text: String,
        photoURL: String? = nil,
        status: ReportStatus = .open, createdAt: Date
    ) {
        self.id = id
        self.orderID = orderID
        self.reporterID = reporterID
        self.reporterRole = reporterRole
        self.category = category
        self.text = text
        self.photoURL = photoURL
        self.status = status
        self.createdAt = createdAt
    }
}

/// `orders.report`: the rider or driver of order `id` reports a problem with it.
@WireModel
public struct ReportParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var id: String
    public var category: ReportCategory
    @WireField(maxLength: 2000, pattern: TextPatterns.message, meaning: TextPatterns.messageMeaning)
    public var text: String
    @WireField(pattern: PhotoRules.pathPattern, meaning: "the path of an uploaded photo (/v1/photos/<sha256>)")
    public var photoURL: String?

    public init(caller: Caller, id: String, category: ReportCategory, text: String, photoURL: String? = nil) {
        self.caller = caller
        self.id = id
        self.category = category
        self.text = text
        self.photoURL = photoURL
    }
}

/// `orders.reports`: the operator's list, newest first.
@WireModel
public struct ReportsQuery: Codable, Sendable, Equatable {
    public var status: ReportStatus?
    @WireField(minimum: 1, maximum: 100)
    public var limit: Int?
    /// Only the reports on this person's rides (as rider or driver): what they filed and what was filed about them.
    public var userID: String?

    public init(status: ReportStatus? = nil, limit: Int? = nil, userID: String? = nil) {
        self.status = status
        self.limit = limit
        self.userID = userID
    }
}

/// When an order reached a status (from its `order.status` events).
@WireModel
public struct StatusStamp: Codable, Sendable, Equatable {
    public var status: OrderStatus
    public var at: Date

    public init(status: OrderStatus, at: Date) {
        self.status = status
        self.at = at
    }
}

/// A report with its ride: the order as it is now and its statuses over time.
@WireModel
public struct ReportedRide: Codable, Sendable, Equatable {
    public var report: RideReport
    public var order: Order?
    public var timeline: [StatusStamp]

    public init(report: RideReport, order: Order?, timeline: [StatusStamp]) {
        self.report = report
        self.order = order
        self.timeline = timeline
    }
}

@WireModel
public struct RideReports: Codable, Sendable, Equatable {
    public var reports: [ReportedRide]
    public init(reports: [ReportedRide]) { self.reports = reports }
}

/// `orders.answer_report`: an operator answers report `id`; the reporter is notified.
@WireModel
public struct AnswerReportParams: Codable, Sendable, Equatable {
    public var id: String
    @WireField(maxLength: 2000, pattern: TextPatterns.message, meaning: TextPatterns.messageMeaning)
    public var answer: String

    public init(id: String, answer: String) {
        self.id = id
        self.answer = answer
    }
}

/// `order.report_answered` data.
@WireModel
public struct ReportAnswered: Codable, Sendable, Equatable {
    public var report: RideReport
    public init(report: RideReport) { self.report = report }
}
