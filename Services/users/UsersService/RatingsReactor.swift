import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import Storage
import Wire

/// Keeps each user's record of rides: counts every `order.rated` of `orders` in the ratee's
/// average and every `order.driver_cancelled` in the driver's cancellations, none missed
/// (`EventReactor` catches up through `orders.events`), none twice (one per order and side, or
/// per order and time). Both change someone's record from what the event says, so they are
/// counted as orders' log has them (`verifies`: the event read back by its sequence), never as the
/// bus carried them: a forged rating counts for nothing.
enum RatingsReactor {
    /// An `orders` event as the reactor needs it: a rating, a driver's cancel, or anything else (skipped).
    enum OrdersEvent: Decodable, Sendable, Equatable {
        case rated(OrderRated)
        case driverCancelled(DriverCancelled)
        case other

        private enum Keys: String, CodingKey {
            case raterID = "rater_id"
            case redispatch
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            if container.contains(.raterID) {
                self = .rated(try OrderRated(from: decoder))
            } else if container.contains(.redispatch) {
                self = .driverCancelled(try DriverCancelled(from: decoder))
            } else {
                self = .other
            }
        }
    }

    static func make(store: any UserStorage, platform: ServiceClient, subscriber: any EventFeed<OrdersEvent>, logger: Logger) -> EventReactor<OrdersEvent> {
        EventReactor(
            name: "ratings", service: "users", sources: [BusContract.Service.orders], cursors: store, subscriber: subscriber, logger: logger,
            verifies: { event in event.data != .other },
            fetch: { source, after, limit in
                try await platform.call(Ops.events(of: source), EventsQuery(after: after, limit: limit))
            },
            handle: { event in
                // Retried until stored (the watermark waits for it): counting is idempotent, so a retry is safe.
                var logger = logger
                switch event.data {
                case .rated(let rated):
                    logger[metadataKey: "order_id"] = "\(rated.orderID)"
                    await retryingWithBackoff("ratings: recording a rating", logger: logger) { try await store.record(rated) }
                case .driverCancelled(let cancelled):
                    logger[metadataKey: "order_id"] = "\(cancelled.orderID)"
                    await retryingWithBackoff("ratings: recording a driver's cancel", logger: logger) { try await store.record(cancelled) }
                case .other:
                    return
                }
            })
    }
}

extension RatingsReactor.OrdersEvent: JSONReadable {
    /// Every `orders` event but a rating or a driver's cancel is skipped, and the common one — a
    /// status change with its whole order, nine a ride — is checked in one pass instead of being
    /// parsed by JSONDecoder only to be dropped (3% of a core in ride-users at 290 rides/s). An
    /// object with `rater_id` (a rating), `redispatch` (a cancel) or a repeated member goes to JSONDecoder.
    static func read(from reader: inout JSONFastReader) -> Self? {
        var seen = MemberSet()
        return reader.object { reader, key in seen.first(key) && key != "rater_id" && key != "redispatch" && reader.skipValue() } ? .other : nil
    }
}
