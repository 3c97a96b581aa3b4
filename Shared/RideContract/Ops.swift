import Bus
import RideModels
import Wire

/// Every op of every service, declared once: its service, its name, its params and its reply.
/// Servers register their handlers through these values, clients call through them, and the docs'
/// op tables, the fuzzer's catalog and the API document are derived from `RideContract.ops`.
public enum Ops {
    /// The events op every event source answers (`EventsQuery` → `EventsPage`): how a reactor catches up.
    public static func events(of service: String) -> Op<EventsQuery, EventsPage> {
        Op(service, "events", "events after a sequence number, oldest first (how a reactor catches up)")
    }

    @Catalog("Op", "Ops.events")
    public enum Users {
        static let service = BusContract.Service.users
        public static let register = Op<RegisterParams, User>(
            service, "register", "registers a rider or driver (201; a repeat answers the same user)")
        public static let login = Op<LoginParams, Session>(
            service, "login", "an access token and a refresh token for a phone number and password")
        public static let authenticate = Op<AuthenticateParams, User>(
            service, "authenticate", "the user of an access token (401 token_expired, token_revoked or token_invalid)")
        public static let refresh = Op<RefreshParams, Session>(
            service, "refresh", "a new access token and refresh token for a refresh token (each works once)")
        public static let logout = Op<AuthenticateParams, SessionEnded>(
            service, "logout", "revokes the session of an access token (expired or not)")
        public static let get = Op<UserIDParams, User>(service, "get", "a user by id")
        public static let update = Op<UpdateUserParams, User>(
            service, "update", "changes a user's name, phone number, device, car or password (a new password revokes every session)")
        public static let savePlace = Op<SavePlaceParams, SavedPlace>(service, "save_place", "saves a home, work or other place (201)")
        public static let places = Op<PlacesParams, SavedPlaces>(service, "places", "a user's saved places")
        public static let deletePlace = Op<PlacesParams, SavedPlaces>(service, "delete_place", "deletes a saved place; the places left")
        public static let issueDeviceCredential = Op<UserIDParams, DeviceCredential>(
            service, "issue_device_credential",
            "a driver's device credential in a new session, without a password (operators' tools on the bus; no route)")
        public static let verifyDeviceCredential = Op<VerifyDeviceCredentialParams, DeviceCredential>(
            service, "verify_device_credential",
            "whether a credential lets a phone stream as a device (401 credential_invalid or credential_revoked)")
        public static let verifyDeviceCredentials = Op<VerifyDeviceCredentialsParams, DeviceCredentialVerdicts>(
            service, "verify_device_credentials",
            "verify_device_credential for up to \(VerifyDeviceCredentialsParams.maximumPairs) pairs at once: a verdict per pair, in order (tracking's ingest, once per interval)"
        )
        public static let loginWithIdentity = Op<IdentityLoginParams, Session>(
            service, "login_with_identity",
            "a session for an identity the gateway verified (Apple, Google, Facebook); an unknown one makes an account")
        public static let linkIdentity = Op<LinkIdentityParams, LinkedIdentity>(
            service, "link_identity", "adds a verified identity to a user's account (201; 409 when it is another account's)")
        public static let putPhoto = Op<PhotoUpload, User>(
            service, "put_photo", "stores a JPEG or PNG (by content, at most 5 MiB) by its SHA-256 as the user's or their car's photo")
        public static let photo = Op<PhotoQuery, Photo>(service, "photo", "a stored photo by its SHA-256")
        public static let suspend = Op<SuspendParams, User>(
            service, "suspend",
            "an operator suspends an account: every session, token and device credential of it ends, and it cannot log in until reinstated")
        public static let reinstate = Op<UserIDParams, User>(
            service, "reinstate", "an operator lifts a suspension: the person may log in again")
        public static let search = Op<SearchUsersParams, People>(
            service, "search",
            "riders and drivers for an operator, newest first: by a part of the name or phone number, or the id; by role; suspended or not")
        public static let putDocument = Op<DocumentUpload, User>(
            service, "put_document",
            "a driver's photo of their licence or insurance (a JPEG or PNG, at most 5 MiB) and the last day it is valid")
        public static let document = Op<DocumentQuery, Photo>(service, "document", "a driver's document photo, for an operator")
        public static let approveDriver = Op<UserIDParams, User>(
            service, "approve_driver", "an operator approves a driver for shifts once their licence and insurance are there and valid")
        public static let withdrawApproval = Op<SuspendParams, User>(
            service, "withdraw_approval", "an operator withdraws a driver's approval: their device goes off duty until approved again")
        public static let events = Ops.events(of: service)
    }

    @Catalog("Op", "Ops.events")
    public enum Orders {
        static let service = BusContract.Service.orders
        public static let create = Op<CreateOrderParams, Order>(
            service, "create", "books a ride (201; a repeated booking answers the same order)")
        public static let get = Op<OrderParams, Order>(service, "get", "an order its rider or driver may see")
        public static let list = Op<ListOrdersParams, OrderList>(
            service, "list", "a rider's orders, or the orders offered to a driver near a point")
        public static let accept = Op<OrderParams, Order>(service, "accept", "a driver takes an order offered to them")
        public static let decline = Op<OrderParams, Order>(service, "decline", "a driver declines an offer; the order is offered on")
        public static let startRide = Op<OrderParams, Order>(service, "start_ride", "the driver starts the ride at the pickup")
        public static let endRide = Op<OrderParams, Order>(
            service, "end_ride", "the driver ends the ride; the trip completes and the fare is charged")
        public static let cancel = Op<OrderParams, Order>(service, "cancel", "the rider or driver cancels before the ride starts")
        public static let arrive = Op<OrderParams, Order>(
            service, "arrive",
            "the driver reports reaching the pickup or the drop-off where the geofence has not fired (their phone's last position near it)")
        public static let noShow = Op<OrderParams, Order>(
            service, "no_show",
            "the driver ends a ride whose rider never came, after the wait at the pickup; the rider pays the cancellation fee")
        public static let changeDestination = Op<ChangeDestinationParams, Order>(
            service, "change_destination",
            "the rider changes the drop-off before the driver reaches it: a new route, estimate and fare quote; the driver is told")
        public static let estimate = Op<EstimateParams, FareEstimate>(service, "estimate", "the fare of a ride before booking it")
        public static let nearbyCars = Op<NearbyCarsParams, NearbyCars>(
            service, "nearby_cars",
            "the available cars near a point for a rider (positions only), the nearest's pickup ETA, and a quote with a dropoff")
        public static let sendMessage = Op<SendMessageParams, ChatMessage>(
            service, "send_message", "a chat message between an order's rider and driver (201)")
        public static let messages = Op<MessagesParams, ChatMessages>(service, "messages", "an order's chat, oldest first")
        public static let rate = Op<RateParams, Order>(service, "rate", "the rider or driver rates the other after the ride")
        public static let history = Op<HistoryParams, RideHistory>(service, "history", "a user's finished rides, newest first")
        public static let share = Op<OrderParams, RideShare>(
            service, "share", "the ride's share id (one link for the whole ride), made on its rider's first ask")
        public static let revokeShare = Op<OrderParams, Order>(
            service, "revoke_share", "ends the ride's share link at once (its rider); a new ask makes a new one")
        public static let getByShare = Op<ShareIDParams, SharedRide>(
            service, "get_by_share",
            "what a ride's share link shows, until an hour (orders' --share-lifetime-s) after the ride (410 share_expired)")
        public static let earnings = Op<EarningsParams, DriverEarnings>(service, "earnings", "a driver's earnings per day")
        public static let payment = Op<OrderParams, Payment>(service, "payment", "the payment of a completed order")
        public static let retryPayment = Op<OrderParams, Payment>(
            service, "retry_payment",
            "the rider has a ride whose charge failed charged again, after fixing their card (a bounded number of times)")
        public static let refund = Op<RefundParams, Payment>(
            service, "refund", "an operator gives a paid order's charge back (a cancellation's fee, a ride's fare); the rider is notified")
        public static let stats = Op<StatsParams, OrderStats>(service, "stats", "counts by status and the open orders (the dashboard)")
        public static let paymentSheet = Op<CardOwnerParams, PaymentSheet>(
            service, "payment_sheet", "a rider's customer at the card provider and an ephemeral key for their app")
        public static let cards = Op<CardOwnerParams, SavedCards>(service, "cards", "a rider's saved cards at the card provider")
        public static let cardSetup = Op<CardSetupParams, CardSetup>(
            service, "card_setup", "the card provider's page where a rider adds a card, sending them back to success_url or cancel_url")
        public static let payoutOnboarding = Op<CardOwnerParams, PayoutOnboarding>(
            service, "payout_onboarding", "a driver's payout account at the card provider and its onboarding link")
        public static let providerWebhook = Op<ProviderWebhookParams, ProviderWebhookReceipt>(
            service, "provider_webhook", "an event the card provider posted, checked by its signature")
        public static let report = Op<ReportParams, RideReport>(
            service, "report", "the rider or driver reports a problem with a ride (201); a lost item reopens its chat")
        public static let reports = Op<ReportsQuery, RideReports>(
            service, "reports", "ride reports for operators, newest first, each with its ride's timeline")
        public static let answerReport = Op<AnswerReportParams, RideReport>(
            service, "answer_report", "an operator answers a report; the reporter is notified")
        public static let events = Ops.events(of: service)
    }

    @Catalog("Op", "Ops.events")
    public enum Trips {
        static let service = BusContract.Service.trips
        public static let create = Op<CreateTripParams, Trip>(
            service, "create", "starts tracking a device to a destination (201; an idempotency key makes one trip)")
        public static let get = Op<TripIDParams, Trip>(service, "get", "a trip by id")
        public static let getByShare = Op<ShareIDParams, Trip>(service, "get_by_share", "a trip by its share link's id")
        public static let complete = Op<TripIDParams, Trip>(service, "complete", "ends a trip with its summary")
        public static let changeDestination = Op<ChangeTripDestinationParams, Trip>(
            service, "change_destination", "an active trip heads somewhere else: a new route and estimate from where the device is")
        public static let events = Ops.events(of: service)
    }

    @Catalog("Op", "Ops.events")
    public enum Tracking {
        static let service = BusContract.Service.tracking
        public static let nearby = Op<NearbyQuery, NearbyResult>(
            service, "nearby", "the nearest devices to a point, available drivers first")
        public static let device = Op<DeviceParams, DeviceInfo>(service, "device", "a device's latest location and status")
        public static let setAvailability = Op<SetAvailabilityParams, DeviceInfo>(
            service, "set_availability", "a driver goes on or off duty")
        public static let locations = Op<LocationsParams, LocationHistory>(
            service, "locations", "a device's recorded locations in a time window")
        public static let ingest = Op<IngestBatch, IngestAck>(
            service, "ingest", "a batch of a device's locations (the ingest socket's batch, over the broker)")
        /// The ops about one device, which a sharded tracking answers on the shard that keeps it.
        public static let deviceOps = [device.name, setAvailability.name, locations.name, ingest.name]
    }

    @Catalog("Op", "Ops.events")
    public enum Notifications {
        static let service = BusContract.Service.notifications
        public static let list = Op<InboxParams, Inbox>(service, "list", "a user's inbox, newest first")
        public static let registerPushToken = Op<PushTokenParams, Done>(service, "register_push_token", "a phone's push token for a user")
        public static let registerWebhook = Op<WebhookParams, Webhook>(
            service, "register_webhook", "an operator's webhook for every order and trip event (201)")
        public static let listWebhooks = Op<NoParams, Webhooks>(service, "list_webhooks", "the registered webhooks")
        public static let deleteWebhook = Op<WebhookIDParams, Done>(
            service, "delete_webhook", "removes a webhook and its pending deliveries")
        public static let rotateWebhookSecret = Op<RotateSecretParams, Webhook>(
            service, "rotate_webhook_secret", "a new secret for a webhook; the previous one signs too until previous_secret_expires_at")
        public static let dropPreviousSecret = Op<WebhookIDParams, Webhook>(
            service, "drop_previous_secret", "ends a rotation: deliveries are signed with the current secret only")
        public static let deadLetters = Op<DeadLettersParams, DeadLetters>(service, "dead_letters", "deliveries that ran out of attempts")
        public static let replay = Op<DeliveryParams, WebhookDelivery>(service, "replay", "sends a dead letter again")
        public static let events = Ops.events(of: service)
    }
}
