import Bus
import Foundation
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import Storage
import TestPostgres
import Testing
import Wire

/// Services on PostgreSQL (`--database-url`), the scale-out store: instances that share nothing
/// but the database and the bus, as on separate machines.
@Suite(.timeLimit(.minutes(4))) struct PostgresIntegrationTests {
    /// Three `ride-users`, each with its own data directory, on one database: registrations spread
    /// over them, a phone number is taken once however many instances race for it, a user registered
    /// through one logs in through another, and every `user.registered` reaches the bus once, in
    /// sequence, with no gap — one outbox, one relay at a time — even after an instance is killed.
    @Test func threeUsersInstancesShareOneDatabase() async throws {
        let database = try await TestPostgresServer.newDatabase()
        try await withTestBus("pg-users") { bus in
            let arguments = ["--password-rounds", "2000", "--database-url", "\(database.urlString)"]
            var instances: [TestService] = []
            for n in 1...3 {
                let instance = TestService(
                    bus: bus, name: "users-\(n)", service: BusContract.Service.users, executable: "ride-users",
                    arguments: arguments, httpPort: try FreePort.next(),
                    environment: ["RIDE_TOKEN_SECRET": String(repeating: "k", count: 32)])
                try await instance.startProcess()
                instances.append(instance)
            }
            #expect(try await bus.workerCount(BusContract.Service.users) >= 3)
            let registered = try await EventSubscriber<UserRegistered>(
                endpoint: bus.egress, prefixes: [Events.userRegistered.topic], logger: testLogger)
            defer { Task { await registered.close() } }
            try await Task.sleep(for: .milliseconds(300))  // the subscription reaches the bus

            // 40 riders at once; then 8 racing for one phone number; one instance killed meanwhile.
            let users = instances[0]
            // Generous: 40 registrations at once on a loaded CI machine, and after the kill the broker
            // gives a request sent to the dead worker to another only once that worker expires.
            func register(_ phone: String, name: String = "Ann") async throws -> Int {
                try await users.call(
                    "register", #"{"role":"rider","name":"\#(name)","phone_number":"\#(phone)","password":"secret123"}"#,
                    timeout: .seconds(30)
                ).status
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<40 { group.addTask { try await register("+38050\(String(format: "%07d", n))") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 201 }, "\(statuses)")
            // Eight different registrations of one number: one is stored, the others are conflicts.
            let race = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<8 { group.addTask { try await register("+380999999999", name: "Ann \(n)") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(race.sorted() == [201] + Array(repeating: 409, count: 7), "\(race)")
            // The same registration eight times at once (retries): one stored, the rest answered with it.
            let retries = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await register("+380999999998") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(retries.sorted() == Array(repeating: 200, count: 7) + [201], "\(retries)")

            bus.supervisor.signal(instances[2].name, SIGKILL)
            for n in 40..<50 { #expect(try await register("+38050\(String(format: "%07d", n))") == 201) }

            // Logged in through whichever instance the broker picks, for users registered through any.
            for n in [0, 17, 45] {
                let login = try await users.call(
                    "login", #"{"phone_number":"+38050\#(String(format: "%07d", n))","password":"secret123"}"#, timeout: .seconds(30))
                #expect(login.status == 200, "\(login)")
            }

            // The outbox: 52 events (one per user), sequences 1…52; the bus saw each once, in order.
            let events = try await Outboxes.events(users)
            #expect(events.compactMap { $0["sequence"]?.stringValue.flatMap(Int.init) } == Array(1...52))
            let received = try await collect(registered, count: 52, timeout: .seconds(20))
            #expect(received.map(\.event.sequence) == Array(1...52).map(UInt64.init), "each event once, in order")
            let phones = received.map(\.event.data.user.phoneNumber)
            #expect(Set(phones).count == 52)
        }
    }

    /// `count` `ride-trips` on one database (`trips-1`, `trips-2`, …).
    static func tripsInstances(_ count: Int, on bus: TestBus, database: PostgresURL) async throws -> [TestService] {
        var instances: [TestService] = []
        for n in 1...count {
            let instance = TestService(
                bus: bus, name: "trips-\(n)", service: BusContract.Service.trips, executable: "ride-trips",
                arguments: ["--database-url", "\(database.urlString)"], httpPort: try FreePort.next())
            try await instance.startProcess()
            instances.append(instance)
        }
        return instances
    }

    /// Waits until each instance watches the one active trip (its `/health` says so).
    static func eachWatchesOneTrip(_ instances: [TestService]) async throws {
        for instance in instances {
            try await eventually("\(instance.name) watches the trip") {
                let health = try await HTTPProbe.get("http://127.0.0.1:\(instance.httpPort)/health")
                return try JSONCoding.decode(JSONValue.self, from: Array(health.body))["details"]?["active_trips"] == 1
            }
        }
    }

    /// Two `ride-trips` on one database, each watching every trip: a create repeated through both
    /// makes one trip; both see the device arrive, one arrival is stored; completes through both
    /// store one completion — one outbox, sequences without a gap.
    /// A service given a primary and its synchronous standby (a host list, read-write): the
    /// primary's host lost and the standby promoted, the service finds it on its own — the accounts
    /// made before are there, new ones are made, without a restart.
    @Test func aServiceFindsThePromotedStandbyOnItsOwn() async throws {
        let primary = try await TestPostgresServer.start(settings: ["synchronous_commit=on", "synchronous_standby_names=*"])
        let standby = try await primary.standby()
        var database = try await primary.newDatabase()
        database.hosts.append(.init(standby.host, port: standby.port))
        database.targetSessionAttrs = .readWrite
        try await withTestBus("pg-failover") { bus in
            let users = TestService(
                bus: bus, name: "users", service: BusContract.Service.users, executable: "ride-users",
                arguments: ["--password-rounds", "2000", "--database-url", database.urlString], httpPort: try FreePort.next(),
                environment: ["RIDE_TOKEN_SECRET": String(repeating: "k", count: 32)])
            try await users.startProcess()
            @Sendable func register(_ n: Int, name: String = "Ann") async throws -> Int {
                try await users.call(
                    "register",
                    #"{"role":"rider","name":"\#(name)","phone_number":"+38050777\#(String(format: "%04d", n))","password":"secret123"}"#
                ).status
            }
            for n in 0..<10 { #expect(try await register(n) == 201) }

            try await primary.stop(immediate: true)
            try await standby.promote()
            try await eventually("a new account on the promoted standby", timeout: .seconds(30)) { (try? await register(10)) == 201 }
            let login = try await users.call("login", #"{"phone_number":"+380507770003","password":"secret123"}"#)
            #expect(login.status == 200, "an account made on the old primary logs in: \(login.body)")
            #expect(try await register(3, name: "Bob") == 409, "and its number is still taken")
        }
    }

    @Test func twoTripsInstancesShareOneDatabase() async throws {
        let database = try await TestPostgresServer.newDatabase()
        try await withTestBus("pg-trips") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let instances = try await Self.tripsInstances(2, on: bus, database: database)
            let trips = instances[0]
            let start = Date()
            try await TripsIntegrationTests.drive(tracking, device: "car-1", from: 0, count: 1, start: start, batch: 1)
            let created = try await withThrowingTaskGroup(of: (status: Int, body: JSONValue).self) { group in
                for _ in 0..<8 { group.addTask { try await TripsIntegrationTests.create(trips, device: "car-1", key: "o-1/pickup") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(created.map { $0.status }.sorted() == [200, 200, 200, 200, 200, 200, 200, 201], "\(created)")
            let ids = Set(created.map { $0.body["trip_id"] })
            #expect(ids.count == 1, "one trip: \(ids)")
            guard case .string(let tripID)? = created.first?.body["trip_id"] else { throw TestFailure("no trip: \(created)") }

            // Both instances watch the trip (the one that made it, and the other from trip.created).
            try await Self.eachWatchesOneTrip(instances)
            try await TripsIntegrationTests.drive(tracking, device: "car-1", from: 1, count: 101, start: start, batch: 2)
            try await eventually("the arrival is stored") {
                try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body["destination"]?["arrived_at"]?.stringValue != nil
            }
            let completions = try await withThrowingTaskGroup(of: JSONValue.self) { group in
                for instance in instances + instances {
                    group.addTask { try await instance.call("complete", #"{"trip_id":"\#(tripID)"}"#).body }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(completions.map { $0["completed_at"] }).count == 1, "one completion: \(completions)")
            #expect(completions.allSatisfy { $0["status"] == "completed" })

            let events = try await Outboxes.events(trips)
            #expect(events.compactMap { $0["sequence"]?.stringValue.flatMap(Int.init) } == Array(1..<(events.count + 1)), "no gap")
            let values = events.compactMap { $0["data"]?["data"]?["value"]?.stringValue }
            #expect(values.filter { $0 == "created" }.count == 1, "\(values)")
            #expect(values.filter { $0 == "destination_arrival" }.count == 1, "\(values)")
            #expect(values.filter { $0 == "completed" }.count == 1, "\(values)")
            #expect(values.last == "completed", "\(values)")
        }
    }
}

extension PostgresIntegrationTests {
    /// A destination changed through one `ride-trips` while another watches the same trip: the
    /// other follows the new destination (the event, or its stale update refused), so with the
    /// first gone it passes the old destination without arriving and arrives at the new one, once.
    @Test func aDestinationChangedThroughOneTripsInstanceIsFollowedByTheOther() async throws {
        let database = try await TestPostgresServer.newDatabase()
        try await withTestBus("pg-trips-destination") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let instances = try await Self.tripsInstances(2, on: bus, database: database)
            let start = Date()
            try await TripsIntegrationTests.drive(tracking, device: "car-1", from: 0, count: 1, start: start, batch: 1)
            let created = try await TripsIntegrationTests.create(instances[0], device: "car-1", key: "o-1/dropoff")
            guard case .string(let tripID)? = created.body["trip_id"] else { throw TestFailure("no trip: \(created)") }
            try await Self.eachWatchesOneTrip(instances)
            // 500 m farther north than the trip's destination, through the second instance.
            let farther = TripsIntegrationTests.origin.destination(bearing: 0, distance: 1500)
            let change =
                #"{"trip_id":"\#(tripID)","destination":{"geometry":{"type":"Point","coordinates":[\#(farther.longitude),\#(farther.latitude)]},"address":"Farther 1"}}"#
            let changed = try await instances[1].call("change_destination", change)
            #expect(changed.status == 200 && changed.body["destination"]?["address"] == "Farther 1", "\(changed.body)")
            #expect(changed.body["destination"]?["radius"] == 30, "the radius stays: \(changed.body)")
            #expect(
                changed.body["estimate"]?["route"]?["distance"]?.numberValue ?? 0 > 1300, "a new estimate from the car: \(changed.body)")
            #expect(
                try await instances[1].call("change_destination", change).body == changed.body,
                "the same change again answers the trip as it is")

            bus.supervisor.signal(instances[1].name, SIGKILL)
            let trips = instances[0]
            // past the old destination
            try await TripsIntegrationTests.drive(tracking, device: "car-1", from: 1, count: 110, start: start, batch: 2)
            try await Task.sleep(for: .seconds(2))
            #expect(
                try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body["destination"]?["arrived_at"] == nil,
                "no arrival at the old destination")
            try await TripsIntegrationTests.drive(tracking, device: "car-1", from: 111, count: 45, start: start, batch: 3)
            try await eventually("the arrival at the new destination is stored", timeout: .seconds(20)) {
                try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body["destination"]?["arrived_at"]?.stringValue != nil
            }
            let late = try await trips.call("change_destination", change.replacingOccurrences(of: "Farther 1", with: "Back again"))
            #expect(late.status == 409 && late.body["error"]?["code"] == "arrived", "\(late.body)")

            let values = try await Outboxes.events(trips).compactMap { $0["data"]?["data"]?["value"]?.stringValue }
            #expect(values.filter { $0 == "destination_changed" }.count == 1, "\(values)")
            #expect(values.filter { $0 == "destination_arrival" }.count == 1, "\(values)")
            #expect(values.last == "destination_arrival", "\(values)")
        }
    }
}

/// The database restarted in the middle of a simulation: users, orders, trips, tracking and notifications on PostgreSQL lose every
/// connection (a fast shutdown ends them), the server is down 6 s, then back. Meanwhile requests
/// are answered 503 `storage_unavailable` and nothing is half-written; the pools reconnect, the
/// reactors retry, the relays send what waited. Afterwards every ride finishes, nothing doubled.
/// `FailureLoad.rides` riders and drivers at once (200), as the other failure tests. A call that
/// runs long meanwhile is named in the services' logs ("database calls running long").
/// In `FailureIntegrationTests` (serialized), beside `FullDiskIntegrationTests`: three simulations
/// of 200 rides at once on two cores starved every process (CI: health waits and "rides under way"
/// timed out).
extension FailureIntegrationTests {
    @Test(.timeLimit(.minutes(6))) func theDatabaseRestartedMidRideLosesNothing() async throws {
        let server = try await TestPostgresServer.start()  // its own: the shared one serves other tests meanwhile
        let database = try await server.createDatabase("rides")
        try await withTestBus("db-restart") { bus in
            let platform = try await OrdersIntegrationTests.Platform.start(bus, database: database)
            let notifications = try await TestService.start(
                on: bus, service: "notifications", executable: "ride-notifications",
                arguments: ["--database-url", database.urlString])
            // What each service said about its database and its failures: the scratch directory goes with the test.
            let services = [platform.users, platform.orders, platform.trips, platform.tracking.process, notifications]
            func printLogs() {
                for service in services {
                    let lines = service.log.split(separator: "\n").filter {
                        $0.contains("database") || $0.contains("error") || $0.contains("warning")
                    }
                    print(
                        "\(service.name)'s log (\(lines.count) lines on the database, errors and warnings; the last 40):\n"
                            + lines.suffix(40).joined(separator: "\n"))
                }
            }
            let simulation = platform.simulate(drivers: FailureLoad.rides, riders: FailureLoad.rides, duration: 30, timeout: .seconds(300))
            try await platform.waitUntilRidesAreUnderWay()

            try await server.stop()
            let down = ContinuousClock.now
            // Refused at once (not left waiting for a connection) once the service has noticed — its
            // probe runs every second; a request sent before may wait for a connection until the client gives up.
            var refused: (status: Int, body: JSONValue)?
            while refused?.status != 503, ContinuousClock.now - down < .seconds(15) {
                refused = try? await platform.users.call(
                    "register", #"{"role":"rider","name":"Down","phone_number":"+380501110000","password":"secret123"}"#)
            }
            #expect(refused?.status == 503 && refused?.body["error"]?["code"] == "storage_unavailable", "\(String(describing: refused))")
            if refused?.status != 503 {
                try? platform.users.log.write(toFile: "/tmp/db-restart-users.log", atomically: true, encoding: .utf8)
            }
            try await Task.sleep(until: down + .seconds(6))
            for name in [platform.users.name, platform.orders.name, platform.trips.name, platform.tracking.process.name] {
                #expect(bus.supervisor.isRunning(name), "\(name) still runs without its database")
            }
            try await server.startServer()
            // Another phone number: a registration sent before users noticed the server down waits for a
            // connection and is stored once the server is back, taking the first number.
            var answer: (status: Int, body: JSONValue)?
            let back = ContinuousClock.now
            while answer?.status != 201, ContinuousClock.now - back < .seconds(30) {
                answer = try? await platform.users.call(
                    "register", #"{"role":"rider","name":"Back","phone_number":"+380501110001","password":"secret123"}"#)
                if answer?.status != 201 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(answer?.status == 201, "users answers a registration again within 30 s of the restart: \(String(describing: answer))")

            let result = try await simulation.value
            #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
            if answer?.status != 201 || result.status != 0 { printLogs() }
            let tally = try await RideTally.read(platform, report: SimulationReport(text: result.stdout))
            let sequences = tally.orderEvents.compactMap { $0["sequence"]?.stringValue.flatMap(Int.init) }
            print(
                """
                failure test — PostgreSQL (users, orders, ledger, trips, tracking, notifications) restarted mid-simulation, down 6 s
                \(tally.lines)
                  orders' outbox \(sequences.count) events, sequences 1…\(sequences.last ?? 0) without a gap: \(sequences == Array(1...max(1, sequences.count)))
                """)
            tally.expectNothingLostOrDoubled()
            await tally.printStoryOfOpenOrders(platform)
            #expect(sequences == Array(1...max(1, sequences.count)), "the outbox kept its sequences gap-free")
        }
        try await server.stop()
    }
}

extension PostgresURL {
    /// The URL with its password, as a flag or variable takes it.
    var urlString: String {
        let hosts = hosts.map { "\($0.name):\($0.port)" }.joined(separator: ",")
        let attrs = targetSessionAttrs == .any ? "" : "&target_session_attrs=\(targetSessionAttrs.rawValue)"
        return "postgres://\(username)\(password.map { ":\($0)" } ?? "")@\(hosts)/\(database)?sslmode=\(tls.rawValue)\(attrs)"
    }
}
