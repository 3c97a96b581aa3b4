import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import ServiceKit
import TrackingSDK
import Wire

/// Drivers and riders playing the apps' parts against a running platform: drivers are
/// `TrackingSDK` devices that drive street routes; riders book rides between random corners;
/// everyone reacts to their rides' statuses as the apps would. It reaches the platform through
/// `RideApps` (the bus, or the published gateway only), counts rides by status and measures each
/// reaction of the orders service as the apps see it (`ReactionClock`).
actor Simulation {
    struct Settings: Sendable {
        var drivers = 10
        var riders = 10
        var speedup = 5.0
        /// Where the cars drive: the city's roads (`RIDE_CITY`, else built-in central Helsinki), or a grid of streets.
        var city: any SimulatedCity =
            RoadCity.current() ?? CityGrid(center: GeoPoint(latitude: 47.8359, longitude: 35.1146), sizeKilometres: 3)
        /// ride-tracking's ingest endpoints, one per shard in shard order.
        var ingest = ["tcp://127.0.0.1:5558"]
        var publishableKey = "pk_dev_ridesharing"
        /// The ingest's CURVE public key, for phones off a secured bus (nil: the process's own keys, or plain).
        var ingestServerKey: String?
        /// The gateway's address, to print the share links of the first rides (nil: none; through
        /// the gateway, the links it gives are printed).
        var shareLinks: String? = "http://localhost:8080"
        var shareLinkCount = 3
        /// The share of offers a driver declines (at most one decline per order, so every order
        /// still finds a driver): the offer passes to the next nearest driver.
        var declineRate = 0.2
        /// The share of accepted rides whose driver cancels on the way to the pickup (once per
        /// order): the order goes back to dispatch and another driver takes it.
        var driverCancelRate = 0.0
    }

    /// What the riders and drivers did beyond the nine steps (the taxi-app features).
    struct Extras: Sendable {
        var declines = 0
        var driverCancels = 0
        var messages = 0
        var ratings = 0
        /// Drives with a wrong turn (the trip re-routed) and with a stop in traffic (the trip late).
        var wrongTurns = 0
        var trafficStops = 0
    }

    struct Driver {
        let id: String
        let device: TrackingDevice
        let car: SimulatedDrive
        var order: String?
        /// Where the car is driving to now (nil: standing).
        var heading: GeoPoint?
    }

    struct Ride {
        var riderID: String
        var status: OrderStatus
        /// When the apps last saw it change (or looked).
        var seenAt = Date()
        /// The chat messages already sent on it (one per side).
        var said: Set<String> = []
        /// When its status last changed, and by when the next change is due: a ride open past that
        /// is stuck, one before it is in flight.
        var progress = RideProgress(status: .new, at: Date())
    }

    let settings: Settings
    private let apps: any RideApps
    private let logger: Logger
    private var drivers: [String: Driver] = [:]
    private var riders: [String: Date] = [:]  // rider id → when they book next
    private var openOrderOf: [String: String] = [:]  // rider id → order id
    private var rides: [String: Ride] = [:]
    private(set) var booking = true
    private var generator = SystemRandomNumberGenerator()
    private var clock = ReactionClock()
    private(set) var failures: [String: Int] = [:]
    private var started = Date()
    private var announcedShareLinks = 0
    private(set) var extras = Extras()
    /// Rides fetched again because they had not moved (see `resync`).
    private(set) var resyncs = 0
    /// Completed rides whose ratings are being given.
    private var rating: Set<String> = []
    /// Order/status pairs being acted on now (see `act(on:)`).
    private var acting: Set<String> = []
    /// Orders a driver of this simulation has declined (or is declining).
    private var declined: Set<String> = []
    /// Orders whose driver cancelled on the way (each at most once).
    private var driverCancelled: Set<String> = []

    init(settings: Settings, apps: any RideApps, logger: Logger) {
        self.settings = settings
        self.apps = apps
        self.logger = logger
    }

    // MARK: Set-up

    /// Registers the riders and drivers (new phone numbers each run) and starts the drivers' phones.
    func setUp() async throws {
        let run = UInt64.random(in: 0..<1_000_000, using: &generator)
        let people = (0..<(settings.drivers + settings.riders)).map { index in (index, index < settings.drivers) }
        // A driver's phone streams with the device credential its registration gives.
        let registered = try await withThrowingTaskGroup(of: (Int, User, String?).self) { group in
            var results: [(Int, User, String?)] = []
            var next = 0
            func launch() {
                let (index, isDriver) = people[next]
                next += 1
                let phone = String(format: "+3809%06llu%02d", run, index % 100) + String(index / 100)
                let params = RegisterParams(
                    role: isDriver ? .driver : .rider, name: isDriver ? "Driver \(index + 1)" : "Rider \(index - settings.drivers + 1)",
                    phoneNumber: String(phone.prefix(16)), password: "simulated-ride",
                    deviceID: isDriver ? "sim-\(run)-\(index)" : nil,
                    car: isDriver
                        ? Car(
                            model: "Prius", licensePlate: "SIM \(index)", make: "Toyota",
                            color: ["white", "black", "silver", "blue"][index % 4]) : nil)
                let apps = self.apps
                group.addTask {
                    let (user, credential) = try await apps.register(params)
                    return (index, user, credential)
                }
            }
            for _ in 0..<min(8, people.count) { launch() }
            while let result = try await group.next() {
                results.append(result)
                if next < people.count { launch() }
            }
            return results.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
        }
        var configuration = SDKConfiguration(publishableKey: settings.publishableKey)
        configuration.endpoints = settings.ingest
        configuration.allowMockLocations = true
        configuration.ingestServerKey = settings.ingestServerKey
        for (user, credential) in registered {
            if user.role == .rider {
                riders[user.id] = Date().addingTimeInterval(Double.random(in: 0...2, using: &generator))
                continue
            }
            let car = SimulatedDrive(at: settings.city.randomPlace(using: &generator), speedup: settings.speedup)
            var own = configuration
            own.deviceCredential = credential
            let device = try TrackingDevice(id: user.deviceID!, configuration: own, provider: car)
            device.name = user.name
            device.metadata = ["user_id": .string(user.id)]
            device.isAvailable = true
            device.startTracking()
            drivers[user.id] = Driver(id: user.id, device: device, car: car)
        }
        started = Date()
    }

    func stopBooking() { booking = false }

    /// Takes every driver off duty and waits, at most `timeout`, until their phones have nothing
    /// unsent: what the report then counts as acknowledged is all they sent.
    func flushFixes(timeout: Duration) async {
        for driver in drivers.values {
            driver.device.isAvailable = false
            driver.device.stopTracking()
        }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, drivers.values.contains(where: { $0.device.statistics.unsent > 0 }) {
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    func shutDown() async {
        for driver in drivers.values { await driver.device.close() }
    }

    // MARK: Riders

    /// How many apps call at once when many act together (riders due to book, drivers looking
    /// at their offers, rides read again).
    static let appsAtOnce = 32

    /// Books a ride for every rider who is due and has no open order, side by side.
    func bookDueRides(now: Date = Date()) async {
        guard booking else { return }
        let due = riders.filter { $0.value <= now && openOrderOf[$0.key] == nil }.map(\.key)
        for riderID in due { riders[riderID] = .distantFuture }
        await forEach(due, atMost: Self.appsAtOnce) { riderID in await self.book(riderID, now: now) }
    }

    private func book(_ riderID: String, now: Date) async {
        do {
            let from = settings.city.randomPlace(using: &generator)
            var to = settings.city.randomPlace(using: &generator)
            for _ in 0..<20 where to.distance(to: from) < 500 { to = settings.city.randomPlace(using: &generator) }
            // Keyed, as an app keys it: a booking sent again after its reply was lost books one ride.
            let order = try await apps.book(
                from: Place(latitude: from.latitude, longitude: from.longitude), to: Place(latitude: to.latitude, longitude: to.longitude),
                as: riderID,
                key: "book-\(riderID)-\(UUID().uuidString.prefix(8))")
            openOrderOf[riderID] = order.id
            if rides[order.id] == nil { rides[order.id] = Ride(riderID: riderID, status: .new) }
            await apps.follow(order.id, as: riderID)
        } catch {
            count("create failed: \(error)")
            riders[riderID] = now.addingTimeInterval(2)
        }
    }

    // MARK: Events

    func handle(_ update: RideUpdate) async {
        switch update.change {
        case .arrival(let tripID):
            if rides[update.rideID] != nil { clock.sawArrival(of: tripID, at: update.seenAt) }
        case .status(let order):
            guard drivers[order.driver?.id ?? ""] != nil || riders[order.rider.id] != nil else { return }  // another simulation's
            clock.saw(order, at: update.seenAt)
            await act(on: order)
        }
    }

    /// What the apps do when they see `order` at its status (from an event, or from a resync).
    private func act(on order: Order) async {
        if let known = rides[order.id], !known.status.isOpen { return }  // finished already
        if order.status == .completed {
            // Counted as finished only once both sides have rated: the run ends when no ride is
            // open, and must not cut the ratings short. Seen twice meanwhile: acted on once.
            guard !rating.contains(order.id) else { return }
            rating.insert(order.id)
            rides[order.id, default: Ride(riderID: order.rider.id, status: .reachedDropoff)].seenAt = Date()
            await finish(order)
            await rate(order.id, as: .rider(order.rider.id))
            await rate(order.id, as: .driver(order.driver?.id ?? ""))
            rides[order.id]?.status = .completed
            rating.remove(order.id)
            return
        }
        rides[order.id, default: Ride(riderID: order.rider.id, status: order.status)].status = order.status
        rides[order.id]?.seenAt = Date()
        rides[order.id]?.progress.saw(order.status, at: Date())
        // The event and a resync can bring the same status at once (this actor runs one while the
        // other awaits a call): the apps act on it once; a later resync may act again (a retry).
        let step = "\(order.id)/\(order.status.rawValue)"
        guard acting.insert(step).inserted else { return }
        defer { acting.remove(step) }

        let caller = Caller.driver(order.driver?.id ?? "")
        switch order.status {
        case .new: await offer(order)
        case .pickingUp:
            if await cancelsOnTheWay(order) { return }
            await drive(order.driver?.id, to: order.pickup)
            announceShareLink(order)
            await say("I'm at the corner, blue jacket.", on: order.id, as: .rider(order.rider.id))
        case .reachedPickup:
            await say("I'm here, \(order.driver?.car?.description ?? "car").", on: order.id, as: caller)
            await act(.start, order.id, as: caller)
        case .droppingOff: await drive(order.driver?.id, to: order.dropoff)
        case .reachedDropoff: await act(.end, order.id, as: caller)
        case .completed: break  // above
        case .cancelled: await finish(order)
        case .accepted, .startedRide: break
        }
    }

    /// Prints where to watch one of the first rides live (what a rider would send a friend).
    private func announceShareLink(_ order: Order) {
        guard let base = settings.shareLinks, announcedShareLinks < settings.shareLinkCount else { return }
        announcedShareLinks += 1
        let apps = self.apps
        Task {
            // The ride's link (as the rider would share it): it follows the whole ride.
            guard let share = try? await apps.share(order.id, as: order.rider.id) else { return }
            // On a terminal, clear the progress line first; it is drawn again on its next tick.
            Output.err(
                (Output.stderrIsTerminal ? "\r\u{1B}[2K" : "")
                    + "ride \(order.id) (\(order.driver?.name ?? "driver") to the pickup), live at \(share.url ?? "\(base)/ride/\(share.shareID)")\n"
            )
        }
    }

    /// Idle drivers look at the orders offered to them (what a driver app shows) and accept one.
    func acceptOffers() async {
        let idle = drivers.filter { $0.value.order == nil }.map(\.key)
        await forEach(idle, atMost: Self.appsAtOnce) { driverID in await self.lookAtOffers(driverID) }
    }

    private func lookAtOffers(_ driverID: String) async {
        guard drivers[driverID]?.order == nil,
            let offers = try? await apps.offers(for: driverID)
        else { return }
        for order in offers where order.offeredTo.contains(driverID) {
            if await declines(order, driverID: driverID) { continue }
            if await accept(order.id, driverID: driverID) { break }
        }
    }

    private func offer(_ order: Order) async {
        // Only this simulation's idle drivers: a real driver offered the same order answers for themselves.
        for driverID in order.offeredTo where drivers[driverID] != nil && drivers[driverID]?.order == nil {
            if await declines(order, driverID: driverID) { continue }
            if await accept(order.id, driverID: driverID) { return }
        }
    }

    /// Some drivers say no (once per order at most): the orders service offers it to the next driver.
    /// Counted here, not read from `order.declinedBy`: that snapshot is stale while several drivers
    /// look at the same order, and an order every nearby driver declined is offered to no one.
    private func declines(_ order: Order, driverID: String) async -> Bool {
        guard order.declinedBy.isEmpty, !declined.contains(order.id), Double.random(in: 0..<1, using: &generator) < settings.declineRate
        else { return false }
        declined.insert(order.id)
        guard (try? await apps.act(.decline, on: order.id, as: .driver(driverID), reason: nil)) != nil else { return false }
        extras.declines += 1
        return true
    }

    /// Some drivers cancel on the way to the pickup (once per order): the order goes back to
    /// dispatch, and this driver is free for other rides.
    private func cancelsOnTheWay(_ order: Order) async -> Bool {
        guard let driverID = order.driver?.id, drivers[driverID] != nil, !driverCancelled.contains(order.id),
            Double.random(in: 0..<1, using: &generator) < settings.driverCancelRate
        else { return false }
        driverCancelled.insert(order.id)
        guard (try? await apps.act(.cancel, on: order.id, as: .driver(driverID), reason: "stuck in traffic")) != nil else { return false }
        drivers[driverID]?.order = nil
        drivers[driverID]?.device.isAvailable = true
        extras.driverCancels += 1
        return true
    }

    /// What the apps do every couple of seconds besides reacting to events: drivers look at their
    /// offers; rides that have not moved are read again.
    func poll() async {
        await acceptOffers()
        await resync()
    }

    /// Rides that have not moved for `after` seconds are fetched again and acted on, as an app
    /// does when it reconnects: an event missed while the bus restarted, or an action that failed
    /// while a service was down, does not leave the ride waiting forever.
    func resync(after: Double = 8) async {
        let now = Date()
        let still = rides.filter { $0.value.status.isOpen && now.timeIntervalSince($0.value.seenAt) > after }
        for orderID in still.keys { rides[orderID]?.seenAt = now }
        await forEach(still.map { ($0.key, $0.value.riderID) }, atMost: Self.appsAtOnce) { orderID, riderID in
            await self.readAgain(orderID, riderID: riderID)
        }
    }

    private func readAgain(_ orderID: String, riderID: String) async {
        guard let order = try? await apps.order(orderID, as: .rider(riderID)) else { return }
        resyncs += 1
        await act(on: order)
    }

    /// A chat message from one party to the other, once per side and order.
    private func say(_ text: String, on orderID: String, as caller: Caller) async {
        // Marked before the call, not after: a second caller arriving while this one awaits skips.
        guard rides[orderID]?.said.insert(caller.id).inserted == true else { return }
        do {
            // Keyed, as an app keys it (Idempotency-Key): a message sent again after its reply was
            // lost (a broker or a service gone at that moment) is stored once.
            try await apps.say(text, on: orderID, as: caller, key: "say-\(orderID)-\(caller.id)")
            extras.messages += 1
        } catch {
            rides[orderID]?.said.remove(caller.id)
            count("send_message failed: \(error)")
        }
    }

    /// Each side rates the other after the ride: 3 to 5 stars.
    private func rate(_ orderID: String, as caller: Caller) async {
        let stars = Int.random(in: 3...5, using: &generator)
        do {
            try await apps.rate(orderID, as: caller, stars: stars)
            extras.ratings += 1
        } catch {
            count("rate failed: \(error)")
        }
    }

    private func accept(_ orderID: String, driverID: String) async -> Bool {
        guard drivers[driverID] != nil, drivers[driverID]?.order == nil else { return false }
        drivers[driverID]?.order = orderID  // held while asking, so this driver takes one order at a time
        if (try? await apps.act(.accept, on: orderID, as: .driver(driverID), reason: nil)) != nil {
            drivers[driverID]?.device.isAvailable = false
            return true
        }
        drivers[driverID]?.order = nil
        return false
    }

    private func drive(_ driverID: String?, to place: Place) async {
        guard let driverID, let driver = drivers[driverID] else { return }
        // The app is in the foreground on a ride, and tracks (as the reference driver app does while
        // in the foreground), whether or not the platform's start_tracking reached the phone: a
        // command published while tracking or the phone was away is not delivered later.
        if !driver.device.isTracking { driver.device.startTracking() }
        let (here, _, _, arrived) = driver.car.position(at: Date())
        let destination = place.point
        // Already on the way there (a resync acting on the same status again): keep driving.
        if driver.heading == destination, !arrived { return }
        drivers[driverID]?.heading = destination
        var random = SystemRandomNumberGenerator()  // the actor's cannot be lent across an await
        let leg = await settings.city.drive(from: here, to: destination, using: &random)
        driver.car.drive(along: leg.line, times: leg.times)
        if let orderID = drivers[driverID]?.order {
            rides[orderID]?.progress.driving(seconds: (leg.times.last ?? 0) / settings.speedup, at: Date())
        }
        if leg.wrongTurn { extras.wrongTurns += 1 }
        if leg.trafficStop > 0 { extras.trafficStops += 1 }
    }

    private func act(_ action: RideAction, _ orderID: String, as caller: Caller) async {
        do {
            try await apps.act(action, on: orderID, as: caller, reason: nil)
        } catch {
            count("\(action.rawValue) failed: \(error)")
        }
    }

    private func finish(_ order: Order) async {
        await apps.unfollow(order.id)
        for (id, driver) in drivers where driver.order == order.id {
            drivers[id]?.order = nil
            driver.device.isAvailable = true
        }
        if openOrderOf[order.rider.id] == order.id {
            openOrderOf[order.rider.id] = nil
            riders[order.rider.id] = Date().addingTimeInterval(Double.random(in: 1...4, using: &generator) / settings.speedup)
        }
    }

    private func count(_ failure: String) {
        failures[String(failure.prefix(160)), default: 0] += 1
    }

    // MARK: Reporting

    var byStatus: [OrderStatus: Int] {
        rides.values.reduce(into: [:]) { $0[$1.status, default: 0] += 1 }
    }

    var openRides: Int { rides.values.filter(\.status.isOpen).count }

    /// Open rides that have had no progress for longer than their step's own expected time.
    func stuckRides(at now: Date = Date()) -> Int { rides.values.filter { $0.status.isOpen && $0.progress.isOverdue(at: now) }.count }

    /// The rides that completed or were cancelled (so far).
    var finishedRideIDs: Set<String> { Set(rides.filter { !$0.value.status.isOpen }.keys) }

    /// Milliseconds from a status (or an arrival) to the reactor's next status, by reaction.
    var reactionLatencies: [String: [Double]] { clock.latencies }

    var elapsed: Double { Date().timeIntervalSince(started) }

    var riderIDs: [String] { Array(riders.keys) }
    /// Each driver's name, by id.
    var driverNames: [String: String] { drivers.mapValues { $0.device.name } }

    /// The drivers' phones' fixes so far: acknowledged (stored by tracking), dropped over the SDK's
    /// limit, waiting, and how often a phone moved to another tracking shard.
    var fixes: DeviceStatistics {
        drivers.values.reduce(into: DeviceStatistics()) { total, driver in
            let stats = driver.device.statistics
            total.acknowledged += stats.acknowledged
            total.dropped += stats.dropped
            total.unsent += stats.unsent
            total.shardSwitches += stats.shardSwitches
        }
    }
}
