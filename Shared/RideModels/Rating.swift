import Foundation
import Wire

/// What one side of a completed ride said of the other: 1–5 stars, an optional comment.
@WireModel
public struct RatingGiven: Codable, Sendable, Equatable {
    public var stars: Int
    public var comment: String?
    public var createdAt: Date

    public init(stars: Int, comment: String? = nil, createdAt: Date) {
        self.stars = stars
        self.comment = comment
        self.createdAt = createdAt
    }
}

/// A user's standing: the average of the stars they received and how many ratings.
@WireModel
public struct UserRating: Codable, Sendable, Equatable {
    public var average: Double
    public var count: Int

    public init(average: Double, count: Int) {
        self.average = average
        self.count = count
    }
}

/// `orders.rate`: the caller rates the other party of a `COMPLETED` order, once.
@WireModel
public struct RateParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var id: String
    @WireField(minimum: 1, maximum: 5)
    public var stars: Int
    @WireField(maxLength: 500)
    public var comment: String?

    public init(caller: Caller, id: String, stars: Int, comment: String? = nil) {
        self.caller = caller
        self.id = id
        self.stars = stars
        self.comment = comment
    }
}

/// `order.rated` data: who rated whom, for which order (users keeps the averages).
@WireModel
public struct OrderRated: Codable, Sendable, Equatable {
    public var orderID: String
    public var raterID: String
    public var raterRole: UserRole
    public var rateeID: String
    public var rating: RatingGiven

    public init(orderID: String, raterID: String, raterRole: UserRole, rateeID: String, rating: RatingGiven) {
        self.orderID = orderID
        self.raterID = raterID
        self.raterRole = raterRole
        self.rateeID = rateeID
        self.rating = rating
    }
}
