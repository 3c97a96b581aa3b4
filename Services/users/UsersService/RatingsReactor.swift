import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import ServiceStorage
import Storage
import Wire

/// Keeps each user's record of rides: counts every `order.rated` of `orders` in the ratee's
/// average and every `order.driver_cancelled` in the driver's cancellations, none missed
/// (`EventReactor` catches up through `orders.events`), none twice (one per order and side, or
/// per order and time). Both change someone's record from what the event says, so they are
/// counted as orders' log has them (`verifies`: the event read back by its sequence), never as the
/// bus carried them: a forged rating counts for nothing.
enum RatingsReactor {
    /// An `orders` event as the reactor needs it, by its CloudEvents type: a rating, a driver's
    /// cancel, or anything else (skipped).
    enum OrdersEvent: EventTypeDispatched, Equatable {
        case rated(OrderRated)
        case driverCancelled(DriverCancelled)
        case other

        init(type: String, from decoder: any Decoder) throws {
            switch type {
            case Events.orderRated.type: self = .rated(try OrderRated(from: decoder))
            case Events.orderDriverCancelled.type: self = .driverCancelled(try DriverCancelled(from: decoder))
            default: self = .other
            }
        }

        /// Every `orders` event but a rating or a driver's cancel is skipped in one pass — the common
        /// one, a status change with its whole order, nine a ride, is never parsed only to be dropped
        /// (3% of a core in ride-users at 290 rides/s); a rating or a cancel goes to JSONDecoder.
        static func read(type: String, from reader: inout JSONFastReader) -> Self? {
            switch type {
            case Events.orderRated.type, Events.orderDriverCancelled.type: nil
            default: reader.skipValue() ? .other : nil
            }
        }
    }

    static func make(store: any UserStorage, platform: ServiceClient, subscriber: any EventFeed<OrdersEvent>, logger: Logger)
        -> EventReactor<OrdersEvent>
    {
        EventReactor(
            name: "ratings", service: "users", sources: [BusContract.Service.orders], cursors: store, subscriber: subscriber,
            logger: logger,
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
