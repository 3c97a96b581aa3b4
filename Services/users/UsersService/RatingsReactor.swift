import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import Storage
import Wire

/// Keeps each user's rating: counts every `order.rated` of `orders` in the ratee's average, none
/// missed (`EventReactor` catches up through `orders.events`), none twice (one per order and side).
enum RatingsReactor {
    /// An `orders` event as the reactor needs it: a rating, or anything else (skipped).
    enum OrdersEvent: Decodable, Sendable, Equatable {
        case rated(OrderRated)
        case other

        private enum Keys: String, CodingKey { case raterID = "rater_id" }

        init(from decoder: any Decoder) throws {
            self = try decoder.container(keyedBy: Keys.self).contains(.raterID) ? .rated(OrderRated(from: decoder)) : .other
        }
    }

    static func make(store: any UserStorage, platform: ServiceClient, subscriber: EventSubscriber<OrdersEvent>, logger: Logger) -> EventReactor<OrdersEvent> {
        EventReactor(
            name: "ratings", sources: [BusContract.Service.orders], cursors: store, subscriber: subscriber, logger: logger,
            fetch: { source, after, limit in
                try await platform.call(Ops.events(of: source), EventsQuery(after: after, limit: limit))
            },
            handle: { event in
                guard case .rated(let rated) = event.data else { return }
                // Retried until stored (the watermark waits for it): counting is idempotent, so a retry is safe.
                var logger = logger
                logger[metadataKey: "order_id"] = "\(rated.orderID)"
                await retryingWithBackoff("ratings: recording a rating", logger: logger) { try await store.record(rated) }
            })
    }
}

extension RatingsReactor.OrdersEvent: JSONReadable {
    /// Every `orders` event but a rating is skipped, and the common one — a status change with its
    /// whole order, nine a ride — is checked in one pass instead of being parsed by JSONDecoder
    /// only to be dropped (3% of a core in ride-users at 290 rides/s). An object with `rater_id`
    /// (a rating) or a repeated member goes to JSONDecoder.
    static func read(from reader: inout JSONFastReader) -> Self? {
        var seen = MemberSet()
        return reader.object { reader, key in seen.first(key) && key != "rater_id" && reader.skipValue() } ? .other : nil
    }
}
