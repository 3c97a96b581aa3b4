import Bus
import RideModels

/// One op of one service and how its router decodes the op's params: through
/// `OpRouter.decodeParams`, the function every `router.on` handler decodes with.
public struct OpParams: Sendable {
    public let service: String
    public let op: String
    /// The params type as Swift names it (`FuzzTests` compares it with each registration).
    public let typeName: String
    public let decode: @Sendable (_ json: [UInt8]) throws(ServiceError) -> Void

    public init(service: String, op: String, typeName: String, decode: @escaping @Sendable (_ json: [UInt8]) throws(ServiceError) -> Void) {
        self.service = service
        self.op = op
        self.typeName = typeName
        self.decode = decode
    }

    init<Params: Decodable & Sendable>(_ service: String, _ op: String, _ type: Params.Type) {
        self.init(service: service, op: op, typeName: String(describing: type)) { json throws(ServiceError) in
            _ = try OpRouter.decodeParams(Params.self, op: op, from: json)
        }
    }

    /// How a fuzz input names this op: `users.register`.
    public var name: String { "\(service).\(op)" }
}

extension OpParams {
    /// Every op of every service with params, and the type its handler takes. `FuzzTests` checks
    /// this list against the `router.on(…)` registrations in Services/, so an op added there and
    /// not here fails the tests.
    public static let all: [OpParams] = [
        .init("users", "register", RegisterParams.self),
        .init("users", "login", LoginParams.self),
        .init("users", "authenticate", AuthenticateParams.self),
        .init("users", "get", UserIDParams.self),
        .init("users", "update", UpdateUserParams.self),
        .init("users", "save_place", SavePlaceParams.self),
        .init("users", "places", PlacesParams.self),
        .init("users", "delete_place", PlacesParams.self),
        .init("users", "events", EventsQuery.self),

        .init("orders", "create", CreateOrderParams.self),
        .init("orders", "get", OrderParams.self),
        .init("orders", "list", ListOrdersParams.self),
        .init("orders", "accept", OrderParams.self),
        .init("orders", "decline", OrderParams.self),
        .init("orders", "start_ride", OrderParams.self),
        .init("orders", "end_ride", OrderParams.self),
        .init("orders", "cancel", OrderParams.self),
        .init("orders", "estimate", EstimateParams.self),
        .init("orders", "send_message", SendMessageParams.self),
        .init("orders", "messages", MessagesParams.self),
        .init("orders", "rate", RateParams.self),
        .init("orders", "history", HistoryParams.self),
        .init("orders", "earnings", EarningsParams.self),
        .init("orders", "payment", OrderParams.self),
        .init("orders", "events", EventsQuery.self),
        .init("orders", "stats", StatsParams.self),

        .init("trips", "create", CreateTripParams.self),
        .init("trips", "get", TripIDParams.self),
        .init("trips", "get_by_share", ShareIDParams.self),
        .init("trips", "complete", TripIDParams.self),
        .init("trips", "events", EventsQuery.self),

        .init("tracking", "nearby", NearbyQuery.self),
        .init("tracking", "device", DeviceParams.self),
        .init("tracking", "set_availability", SetAvailabilityParams.self),
        .init("tracking", "locations", LocationsParams.self),
        .init("tracking", "ingest", IngestBatch.self),

        .init("notifications", "list", InboxParams.self),
        .init("notifications", "register_push_token", PushTokenParams.self),
        .init("notifications", "register_webhook", WebhookParams.self),
        .init("notifications", "list_webhooks", NoParams.self),
        .init("notifications", "delete_webhook", WebhookIDParams.self),
        .init("notifications", "dead_letters", DeadLettersParams.self),
        .init("notifications", "replay", DeliveryParams.self),
        .init("notifications", "events", EventsQuery.self),
    ]

    static let byName: [String: OpParams] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
