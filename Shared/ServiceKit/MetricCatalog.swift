/// One metric the platform exports: declared once here, and everything else — the code that
/// makes it, docs/metrics.md, the alert rules and the dashboard — names it from this table
/// (`MetricCatalogTests` checks the documents against it).
public struct MetricSpec: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public let name: String
    public let kind: Kind
    public let labels: [String]
    public let help: String
    /// The executables that export it (`all` for every one).
    public let exporters: String

    public init(_ name: String, _ kind: Kind, labels: [String] = [], by exporters: String, _ help: String) {
        self.name = name
        self.kind = kind
        self.labels = labels
        self.help = help
        self.exporters = exporters
    }

    /// The names a query or a document may use: the name, and a histogram's `_bucket`, `_count` and `_sum`.
    public var seriesNames: [String] {
        kind == .histogram ? [name, name + "_bucket", name + "_count", name + "_sum"] : [name]
    }
}

/// Every metric of the platform, and the histogram buckets of every duration.
public enum RideMetric {
    // MARK: Every service

    public static let opDuration = MetricSpec(
        "ride_op_duration_seconds", .histogram, labels: ["service", "op", "outcome"], by: "all services",
        "Time to answer one op on the bus, by service, op and outcome (`ok`: 2xx, `refused`: 4xx, `error`: 5xx).")
    public static let processMemory = MetricSpec("process_resident_memory_bytes", .gauge, by: "all", "Resident memory size in bytes.")
    public static let processCPU = MetricSpec(
        "process_cpu_seconds_total", .counter, by: "all", "Total user and system CPU time in seconds.")
    public static let processFDs = MetricSpec("process_open_fds", .gauge, by: "all", "Number of open file descriptors.")
    public static let processStart = MetricSpec(
        "process_start_time_seconds", .gauge, by: "all", "Start time of the process since the Unix epoch in seconds.")

    public static let eventsRefused = MetricSpec(
        "ride_events_refused_total", .counter, labels: ["reason"], by: "all services",
        "Events this process refused, by `reason`: `malformed`, `source` (not its topic's publisher), `far_ahead` (a sequence beyond its publisher's log), `conflict` (not the event the log has at its sequence), `restart` (a claim that its source started over while its log goes on)."
    )

    // MARK: Every process with a bus of several instances (`BrokerFailover`, copied on scrape)

    public static let brokerFailovers = MetricSpec(
        "ride_broker_failovers_total", .counter, by: "all services",
        "Times this process's requests moved to another broker because theirs fell silent (a bus of several instances only).")
    public static let brokerUp = MetricSpec(
        "ride_broker_up", .gauge, labels: ["broker"], by: "all services",
        "Whether this process's last probe of the broker was answered (1) or not (0) (a bus of several instances only).")

    // MARK: Gateway (Hummingbird's MetricsMiddleware, renamed by `libraryNames`)

    public static let httpRequests = MetricSpec(
        "ride_gateway_http_requests_total", .counter, labels: ["route", "method", "status"], by: "gateway",
        "HTTP requests answered, by route, method and status.")
    public static let httpDuration = MetricSpec(
        "ride_gateway_http_request_duration_seconds", .histogram, labels: ["route", "method", "status"], by: "gateway",
        "Time to answer an HTTP request (until its body is written), by route, method and status.")
    public static let httpErrors = MetricSpec(
        "ride_gateway_http_request_errors_total", .counter, labels: ["route", "method", "status"], by: "gateway",
        "HTTP requests answered with an error thrown by a handler.")
    public static let httpActive = MetricSpec(
        "ride_gateway_http_active_requests", .gauge, labels: ["method"], by: "gateway", "HTTP requests being answered.")

    // MARK: Orders

    public static let reactionLatency = MetricSpec(
        "ride_orders_reaction_latency_seconds", .histogram, labels: ["transition"], by: "orders",
        "From the event that triggers a reaction (its CloudEvent `time`) to the status change the reaction committed, by transition `FROM->TO`."
    )
    public static let ridesCompleted = MetricSpec("ride_orders_rides_completed_total", .counter, by: "orders", "Rides ended (`COMPLETED`).")
    public static let ridesCancelled = MetricSpec(
        "ride_orders_rides_cancelled_total", .counter, by: "orders",
        "Orders cancelled (`CANCELLED`, by the rider, the driver or for want of a driver).")
    public static let noDriverFound = MetricSpec(
        "ride_orders_no_driver_found_total", .counter, by: "orders",
        "Orders cancelled because no driver accepted them within --driver-search-s.")

    // MARK: Users

    public static let users = MetricSpec("ride_users_users", .gauge, by: "users", "Users registered.")

    // MARK: Notifications

    public static let pushes = MetricSpec(
        "ride_notifications_pushes_total", .counter, labels: ["platform", "outcome"], by: "notifications",
        "Push attempts, by `platform` (`apns`, `fcm`, `file`) and `outcome` (`sent`, `retry`, `dead_token`: the token removed, `failed`: given up)."
    )

    // MARK: Bus (copied from the forwarder's and the broker's own counters on scrape)

    public static let eventsForwarded = MetricSpec(
        "ride_bus_events_forwarded_total", .counter, by: "bus", "Events moved from ingress to egress.")
    public static let subscriptionMessages = MetricSpec(
        "ride_bus_subscription_messages_total", .counter, by: "bus", "Subscribe/unsubscribe messages passed upstream.")
    public static let rejectedMessages = MetricSpec(
        "ride_bus_rejected_messages_total", .counter, labels: ["socket"], by: "bus",
        "Messages dropped as malformed (`socket`: `ingress` for event batches, `egress` or `broker`).")
    public static let busRequests = MetricSpec("ride_bus_requests_total", .counter, by: "bus", "Client requests received by the broker.")
    public static let busPacked = MetricSpec(
        "ride_bus_packed_messages_total", .counter, by: "bus",
        "Client requests and worker replies that came packed into one frame, as the platform's own peers send them (docs/design.md#one-frame-requests)."
    )
    public static let eventBatches = MetricSpec(
        "ride_bus_event_batches_total", .counter, by: "bus",
        "Event batches the forwarder split into their events: several events in one frame, as the platform's own publishers send them (docs/design.md#events-in-batches)."
    )
    public static let busReplies = MetricSpec(
        "ride_bus_replies_total", .counter, by: "bus", "Replies sent to clients (worker replies and MMI).")
    public static let busRefused = MetricSpec(
        "ride_bus_refused_requests_total", .counter, by: "bus",
        "Requests answered 503 by the broker (no worker in time, queue full, worker lost).")
    public static let denied = MetricSpec(
        "ride_bus_denied_total", .counter, labels: ["action", "role"], by: "bus",
        "What a secured bus's policy refused, by `action` (`serve`, `call`, `publish`, `subscribe`) and the key's `role` (`none`: a key without one)."
    )
    public static let expiredWorkers = MetricSpec(
        "ride_bus_expired_workers_total", .counter, by: "bus", "Workers dropped after missing heartbeats.")
    public static let requeued = MetricSpec(
        "ride_bus_requeued_requests_total", .counter, by: "bus", "Requests given to another worker after theirs was lost.")
    public static let serviceRequests = MetricSpec(
        "ride_bus_service_requests_total", .counter, labels: ["service"], by: "bus", "Requests per service.")
    public static let workers = MetricSpec("ride_bus_workers", .gauge, labels: ["service"], by: "bus", "Registered workers per service.")
    public static let queued = MetricSpec(
        "ride_bus_queued_requests", .gauge, labels: ["service"], by: "bus",
        "Requests waiting for a worker per service (the broker's queue depth).")

    // MARK: Tracking (copied from the ingest pipeline's own counters on scrape)

    public static let locationsAccepted = MetricSpec(
        "ride_tracking_locations_accepted_total", .counter, by: "tracking",
        "Locations accepted (stored, indexed): the ingest rate is its `rate()`.")
    public static let locationsRejected = MetricSpec(
        "ride_tracking_locations_rejected_total", .counter, by: "tracking", "Locations refused by the rules.")
    public static let batches = MetricSpec("ride_tracking_batches_total", .counter, by: "tracking", "Batches accepted.")
    public static let refusedBatches = MetricSpec(
        "ride_tracking_refused_batches_total", .counter, by: "tracking", "Batches or messages refused whole (bad key, malformed, too big).")
    public static let historyWritten = MetricSpec(
        "ride_tracking_history_written_total", .counter, by: "tracking", "Locations written to the history.")
    public static let eventsPublished = MetricSpec(
        "ride_tracking_events_published_total", .counter, by: "tracking", "device.location and device.status events published.")
    public static let commits = MetricSpec(
        "ride_tracking_commits_total", .counter, by: "tracking", "Group commits of the history (a commit carries every batch queued).")
    public static let failedCommits = MetricSpec(
        "ride_tracking_failed_commits_total", .counter, by: "tracking", "Group commits that failed.")
    public static let devices = MetricSpec("ride_tracking_devices", .gauge, by: "tracking", "Devices known.")
    public static let activeDevices = MetricSpec("ride_tracking_active_devices", .gauge, by: "tracking", "Devices active (reporting).")
    public static let indexPoints = MetricSpec("ride_tracking_index_points", .gauge, by: "tracking", "Devices in the spatial index.")
    public static let indexCells = MetricSpec("ride_tracking_index_cells", .gauge, by: "tracking", "Occupied cells of the spatial index.")
    public static let shardForwards = MetricSpec(
        "ride_tracking_shard_forwards_total", .counter, by: "tracking", "Device ops passed on to the shard that keeps the device.")
    public static let shardForwardsUnanswered = MetricSpec(
        "ride_tracking_shard_forwards_unanswered_total", .counter, by: "tracking",
        "Device ops whose shard did not answer (503 shard_unavailable).")
    public static let nearbyShardsMissing = MetricSpec(
        "ride_tracking_nearby_shards_missing_total", .counter, by: "tracking",
        "Shards left out of a Nearby answer: no answer within the deadline.")

    /// Every metric, in the order docs/metrics.md lists them.
    public static let all: [MetricSpec] = [
        opDuration, processMemory, processCPU, processFDs, processStart, eventsRefused, brokerFailovers, brokerUp,
        httpRequests, httpDuration, httpErrors, httpActive,
        reactionLatency, ridesCompleted, ridesCancelled, noDriverFound,
        users, pushes,
        eventsForwarded, subscriptionMessages, rejectedMessages, busRequests, busPacked, eventBatches, busReplies, busRefused, denied,
        expiredWorkers,
        requeued,
        serviceRequests, workers,
        queued,
        locationsAccepted, locationsRejected, batches, refusedBatches, historyWritten, eventsPublished, commits, failedCommits, devices,
        activeDevices,
        indexPoints, indexCells, shardForwards, shardForwardsUnanswered, nearbyShardsMissing,
    ]

    /// The metric a series name (`ride_op_duration_seconds_bucket`, say) belongs to; nil: undeclared.
    public static func declaring(series: String) -> MetricSpec? {
        all.first { $0.seriesNames.contains(series) }
    }

    /// The buckets of every duration histogram: ops answer in tenths of a millisecond to a few
    /// milliseconds, reactions and HTTP requests in milliseconds to seconds.
    public static let durationBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5),
        .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10), .seconds(30),
    ]

    /// Libraries' swift-metrics labels (Hummingbird's) under the names and labels declared here.
    public static let libraryNames: [String: MetricSpec] = [
        "hb.requests": httpRequests, "http.server.request.duration": httpDuration, "hb.request.errors": httpErrors,
        "http.server.active_requests": httpActive,
    ]
    static let libraryLabels = [
        "http.route": "route", "http.request.method": "method", "http.response.status_code": "status", "error.type": "status",
    ]

    /// A library's metric name and labels as Prometheus takes them: renamed when declared above,
    /// else with every character Prometheus refuses in a name (a `.`) made `_`.
    @Sendable public static func sanitize(_ name: String, _ labels: [(String, String)]) -> (String, [(String, String)]) {
        let renamed = libraryNames[name]?.name ?? prometheusName(name)
        return (renamed, labels.map { (libraryLabels[$0.0] ?? prometheusName($0.0), $0.1) })
    }

    static func prometheusName(_ name: String) -> String {
        String(
            name.unicodeScalars.map { scalar in
                (scalar.properties.isAlphabetic && scalar.isASCII) || ("0"..."9").contains(scalar) ? Character(scalar) : "_"
            })
    }
}
