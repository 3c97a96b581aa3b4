import Bus
import Foundation
import Geo
import PlatformLauncher
import RideModels
import ServiceKit
import TestPostgres
import Testing
import TrackingSDK
import Wire

/// ride-tracking as two shards (`--shard 0/2`, `--shard 1/2`) beside a real bus, sharing a data
/// directory as `ridectl up --tracking-shards 2` runs them; devices use the TrackingSDK with both
/// shards' ingest endpoints, callers use the one public service `tracking`.
@Suite(.timeLimit(.minutes(3))) struct TrackingShardsIntegrationTests {
    static let center = GeoPoint(latitude: 47.8359, longitude: 35.1146)
    static let shards = DeviceShards(count: 2)

    @Test func devicesOfBothShardsAreFoundNearestFirstAndAnsweredWhicheverShardIsAsked() async throws {
        try await withTestBus("shards-nearby") { bus in
            let tracking = try await TrackingShardsFixture.start(on: bus)
            // Six devices 150 m apart, alternating shards: a merge that is not by distance shows.
            let owners = [0, 1, 0, 1, 0, 1]
            let ids = [Self.ids("car", shard: 0, count: 3), Self.ids("car", shard: 1, count: 3)]
            let order = owners.enumerated().map { index, shard in ids[shard][index / 2] }
            let runtime = DeviceRuntime()
            var devices: [TrackingDevice] = []
            for (index, id) in order.enumerated() {
                let point = Self.center.destination(bearing: Double(index) * 60, distance: Double(index + 1) * 150)
                let device = try TrackingDevice(
                    id: id, configuration: TestTracking.sdkConfiguration(endpoints: tracking.endpoints),
                    provider: FixedLocation(point), runtime: runtime)
                device.isAvailable = true
                device.startTracking()
                devices.append(device)
            }
            let everyone = NearbyQuery(location: GeoJSONPoint(Self.center), radius: 5000, limit: 50)
            try await eventually("all six devices are found") {
                try await tracking.anyShard.call("nearby", everyone, as: NearbyResult.self).devices.count == 6
            }
            // The broker hands each request to the longest-idle worker: four requests in a row reach
            // both shards' public workers (two connections each), so each shard merges.
            for _ in 0..<4 {
                let all = try await tracking.anyShard.call("nearby", everyone, as: NearbyResult.self)
                #expect(all.devices.map(\.deviceID) == order, "nearest first, across shards")
                #expect(all.devices.map(\.distance) == all.devices.map(\.distance).sorted())
                let four = try await tracking.anyShard.call(
                    "nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 5000, limit: 4),
                    as: NearbyResult.self)
                #expect(four.devices.map(\.deviceID) == Array(order.prefix(4)), "the limit cuts the merged answer")
                let close = try await tracking.anyShard.call(
                    "nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 460), as: NearbyResult.self)
                #expect(close.devices.map(\.deviceID) == Array(order.prefix(3)))
            }
            for (index, shard) in tracking.shards.enumerated() {
                let health = try await shard.health()
                #expect(health["details"]?["shard"]?.stringValue == "\(index)/2")
                #expect(health["details"]?["devices"] == 3, "shard \(index) keeps only its own devices")
            }

            // Every device op answered through `tracking`, whichever shard takes the request.
            for id in order {
                for _ in 0..<4 {
                    let info = try await tracking.anyShard.call("device", DeviceParams(deviceID: id), as: DeviceInfo.self)
                    #expect(info.deviceID == id && info.location != nil)
                }
                let history = try await tracking.anyShard.call("locations", LocationsParams(deviceID: id), as: LocationHistory.self)
                #expect(history.deviceID == id && !history.locations.isEmpty)
            }
            for shard in tracking.shards {
                #expect(
                    try await shard.metric("ride_tracking_shard_forwards_total") >= 1, "\(shard.name) passed on another shard's device ops")
            }
            let other = ids[1][0]
            let unavailable = try await tracking.anyShard.call(
                "set_availability", SetAvailabilityParams(deviceID: other, available: false), as: DeviceInfo.self)
            #expect(!unavailable.available)
            for _ in 0..<4 {
                #expect(try await tracking.anyShard.call("device", DeviceParams(deviceID: other), as: DeviceInfo.self).available == false)
            }
            let unknown = try await tracking.anyShard.callRaw("device", json: #"{"device_id":"nobody-at-all"}"#)
            #expect(unknown.status == 404 && unknown.serviceError?.code == "unknown_device", "the owner's answer, status and all")

            // A peer service answers for its own devices only, and never passes a request on.
            let client = try await bus.client(timeout: .seconds(3))
            let refused = try await client.callRaw(
                BusContract.Service.trackingShard(0), "device", json: Array(#"{"device_id":"\#(other)"}"#.utf8))
            #expect(refused.status == 409 && refused.serviceError?.code == "wrong_shard")
            #expect(refused.serviceError?.message.contains("tracking shard 1/2 (service tracking.shard.1)") == true, "\(refused)")
            let own = try await client.callRaw(
                BusContract.Service.trackingShard(1), "device", json: Array(#"{"device_id":"\#(other)"}"#.utf8))
            #expect(own.status == 200)
            await client.close()
            for device in devices { await device.close() }

            let files = try FileManager.default.contentsOfDirectory(atPath: tracking.shards[0].process.dataDirectory).filter {
                $0.hasSuffix(".sqlite")
            }
            #expect(files.sorted() == ["tracking-shard-0-of-2.sqlite", "tracking-shard-1-of-2.sqlite"], "a file per shard, none shared")
        }
    }

    @Test func batchesForAnotherShardAreForwardedThroughTheBrokerAndRefusedOnTheIngestSocket() async throws {
        try await withTestBus("shards-ingest") { bus in
            let tracking = try await TrackingShardsFixture.start(on: bus)
            let onShard1 = Self.ids("op", shard: 1, count: 1)[0]
            // The `ingest` op through `tracking`: half of these reach shard 0, which passes them on.
            for batchID in 1...4 {
                let ack = try await tracking.anyShard.call(
                    "ingest", Self.batch(onShard1, id: UInt64(batchID), at: Self.center), as: IngestAck.self)
                #expect(ack.batchID == UInt64(batchID) && ack.accepted == 1)
            }
            let history = try await tracking.anyShard.call("locations", LocationsParams(deviceID: onShard1), as: LocationHistory.self)
            #expect(history.locations.count == 4)
            #expect(try await tracking.shards[0].health()["details"]?["devices"] == 0, "shard 0 stored nothing")
            #expect(try await tracking.shards[1].health()["details"]?["devices"] == 1)
            #expect(try await tracking.shards[0].metric("ride_tracking_shard_forwards_total") >= 1)

            // Straight to the wrong shard's ingest socket: refused, naming the owner; nothing stored.
            let stranger = Self.ids("sock", shard: 1, count: 1)[0]
            let batch = String(decoding: try JSONCoding.encode(Self.batch(stranger, id: 9, at: Self.center)), as: UTF8.self)
            let reply = try IngestProbe.exchange(endpoint: tracking.shards[0].ingest, routingID: stranger, frames: ["batch", batch])
            #expect(reply.first == "error", "\(reply)")
            let body = try JSONCoding.decode(JSONValue.self, from: Array(reply.last!.utf8))
            #expect(body["error"]?["code"]?.stringValue == "wrong_shard")
            #expect(body["error"]?["message"]?.stringValue?.contains("tracking shard 1/2") == true, "\(body)")
            #expect(body["batch_id"] == 9)
            #expect(tracking.shards[0].log.contains("batch refused"), "refusals are logged")
            #expect(try await tracking.shards[0].health()["details"]?["devices"] == 0)
            let notStored = try await tracking.anyShard.callRaw("device", json: #"{"device_id":"\#(stranger)"}"#)
            #expect(notStored.status == 404, "\(notStored)")
            // The `ingest` op straight to the wrong shard's peer service: refused the same way.
            let client = try await bus.client(timeout: .seconds(3))
            let op = try await client.callRaw(
                BusContract.Service.trackingShard(0), "ingest", json: try JSONCoding.encode(Self.batch(stranger, id: 10, at: Self.center)))
            #expect(op.status == 409 && op.serviceError?.code == "wrong_shard")
            await client.close()

            // The same batch to the right shard's socket is stored.
            let right = try IngestProbe.exchange(endpoint: tracking.shards[1].ingest, routingID: stranger, frames: ["batch", batch])
            #expect(right.first == "ack", "\(right)")
            #expect(try await tracking.anyShard.call("device", DeviceParams(deviceID: stranger), as: DeviceInfo.self).deviceID == stranger)
        }
    }

    @Test func aKilledShardLeavesNearbyAnsweringAndComesBackWithItsDevices() async throws {
        try await withTestBus("shards-kill") { bus in
            let tracking = try await TrackingShardsFixture.start(on: bus)
            let ids = [Self.ids("k", shard: 0, count: 2), Self.ids("k", shard: 1, count: 2)]
            // Stored by the `ingest` op, not by SDKs: after the restart nothing sends them again, so
            // what comes back comes from the shard's SQLite file.
            for (index, id) in (ids[0] + ids[1]).enumerated() {
                let point = Self.center.destination(bearing: 45, distance: Double(index + 1) * 100)
                for batchID in 1...3 {
                    _ = try await tracking.anyShard.call(
                        "ingest", Self.batch(id, id: UInt64(batchID), at: point, secondsAgo: Double(10 - batchID)),
                        as: IngestAck.self)
                }
            }
            let query = NearbyQuery(location: GeoJSONPoint(Self.center), radius: 2000)
            #expect(try await tracking.anyShard.call("nearby", query, as: NearbyResult.self).devices.count == 4)

            bus.supervisor.signal(tracking.shards[1].name, SIGKILL)
            _ = await bus.supervisor.waitForExit(tracking.shards[1].name, timeout: .seconds(5))
            // Until the broker drops the dead shard's workers (missed heartbeats) a request may still be
            // handed to them and lost — the callers' retry covers that, as for any dead worker.
            try await bus.waitForWorkers(BusContract.Service.trackingShard(1), present: false)
            try await eventually("only shard 0's workers serve tracking") { try await bus.workerCount(BusContract.Service.tracking) == 2 }

            // A down shard costs its deadline (ShardPeers: 1 s for nearby, 2 s for a device op, the
            // MDP client's request timeout of SocketLoopTests), not a hang: the shard says it gave up
            // (the log, the counter, the 503's message), the caller tries once with a timeout of 8 s,
            // which a hang would hit, and the time taken is printed, not held to the wall clock of a
            // machine shared with whole-platform simulations.
            let caller = try await bus.client(timeout: .seconds(8))
            var took: [Duration] = []
            for _ in 0..<2 {
                let started = ContinuousClock.now
                let partial = try await caller.call(BusContract.Service.tracking, "nearby", query, as: NearbyResult.self)
                took.append(ContinuousClock.now - started)
                #expect(partial.devices.map(\.deviceID) == ids[0], "the live shard's devices, nearest first")
            }
            #expect(try await tracking.shards[0].metric("ride_tracking_nearby_shards_missing_total") >= 2)
            #expect(tracking.shards[0].log.contains("nearby: a shard did not answer"))
            let started = ContinuousClock.now
            let down = try await caller.callRaw(BusContract.Service.tracking, "device", json: Array(#"{"device_id":"\#(ids[1][0])"}"#.utf8))
            took.append(ContinuousClock.now - started)
            print("shard down: nearby answered in \(took[0]), \(took[1]); a device op in \(took[2])")
            await caller.close()
            #expect(down.status == 503 && down.serviceError?.code == "shard_unavailable", "\(down)")
            #expect(
                down.serviceError?.message.contains("tracking shard 1/2") == true
                    && down.serviceError?.message.contains("within 2 s") == true)
            #expect(
                try await tracking.anyShard.call("device", DeviceParams(deviceID: ids[0][0]), as: DeviceInfo.self).deviceID == ids[0][0],
                "the live shard's devices are answered")

            try await tracking.shards[1].startProcess()
            try await eventually("shard 1's devices are back") {
                try await tracking.anyShard.call("nearby", query, as: NearbyResult.self).devices.map(\.deviceID) == ids[0] + ids[1]
            }
            #expect(try await tracking.shards[1].health()["details"]?["devices"] == 2)
            for id in ids[1] {
                let history = try await tracking.anyShard.call("locations", LocationsParams(deviceID: id), as: LocationHistory.self)
                #expect(history.locations.count == 3, "\(id)'s history, from shard 1's SQLite file")
            }
        }
    }

    /// On PostgreSQL the shards hand over: a killed shard's devices are served by the other within
    /// seconds (at their stored positions at once, then from their phones, which follow the ingest
    /// error to the serving shard), and given back when it returns. Every fix the SDKs saw
    /// acknowledged is stored once.
    @Test func onPostgreSQLAKilledShardsDevicesAreServedByTheOtherAndGivenBack() async throws {
        let database = try await TestPostgresServer.newDatabase()
        try await withTestBus("shards-handover") { bus in
            let tracking = try await TrackingShardsFixture.start(on: bus, arguments: ["--database-url", database.urlString])
            let ids = [Self.ids("h", shard: 0, count: 2), Self.ids("h", shard: 1, count: 2)]
            let runtime = DeviceRuntime()
            var devices: [TrackingDevice] = []
            for (index, id) in (ids[0] + ids[1]).enumerated() {
                let device = try TrackingDevice(
                    id: id, configuration: TestTracking.sdkConfiguration(endpoints: tracking.endpoints),
                    provider: FixedLocation(Self.center.destination(bearing: 90, distance: Double(index + 1) * 100)), runtime: runtime)
                device.isAvailable = true
                device.startTracking()
                devices.append(device)
            }
            let query = NearbyQuery(location: GeoJSONPoint(Self.center), radius: 2000)
            let everyone = Set(ids[0] + ids[1])
            try await eventually("all four devices are found") {
                Set(try await tracking.anyShard.call("nearby", query, as: NearbyResult.self).devices.map(\.deviceID)) == everyone
            }
            #expect(try await tracking.shards[1].health()["details"]?["devices"] == 2)

            let killed = Date()
            let clock = ContinuousClock.now
            bus.supervisor.signal(tracking.shards[1].name, SIGKILL)
            _ = await bus.supervisor.waitForExit(tracking.shards[1].name, timeout: .seconds(5))
            // Shard 0 takes shard 1's devices over once it has not answered for 3 s: Nearby finds
            // all four (the caller's retry covers a request the broker hands to the dead workers).
            let caller = try await bus.client(timeout: .seconds(3))
            try await eventually("shard 0 serves shard 1's devices", timeout: .seconds(20)) {
                let found = try? await caller.call(BusContract.Service.tracking, "nearby", query, as: NearbyResult.self)
                return found.map { Set($0.devices.map(\.deviceID)) } == everyone
            }
            let visibleAgain = ContinuousClock.now - clock
            print("handover: shard 1's devices in Nearby again \(visibleAgain) after its kill")
            // Beside whole-platform simulations on two cores, a caller's request may also be handed to
            // the dead shard's workers until the broker drops them (7.5 s) and cost its 3-s timeout.
            #expect(visibleAgain < .seconds(15), "within the stated 15 s")
            let health = try await tracking.shards[0].health()
            #expect(health["details"]?["devices"] == 4 && health["details"]?["live_shards"] == [0], "\(health)")
            #expect(tracking.shards[0].log.contains("tracking shards up: 0"))
            // Their phones follow: shard 0 stores their new fixes.
            for id in ids[1] {
                try await eventually("\(id) reports to shard 0", timeout: .seconds(30)) {
                    let info = try? await caller.call(
                        BusContract.Service.tracking, "device", DeviceParams(deviceID: id), as: DeviceInfo.self)
                    return (info?.lastSeen ?? .distantPast) > killed.addingTimeInterval(1)
                }
            }
            #expect(devices.filter { ids[1].contains($0.id) }.allSatisfy { $0.statistics.shardSwitches >= 1 })

            // Shard 1 returns and takes its devices back; nothing is served twice.
            try await tracking.shards[1].startProcess()
            try await eventually("shard 1 serves its devices again", timeout: .seconds(30)) {
                let (first, second) = (try await tracking.shards[0].health(), try await tracking.shards[1].health())
                return first["details"]?["devices"] == 2 && second["details"]?["devices"] == 2
            }
            for id in ids[1] {
                try await eventually("\(id) reports to shard 1 again", timeout: .seconds(30)) {
                    let info = try? await caller.call(
                        BusContract.Service.trackingShard(1), "device", DeviceParams(deviceID: id), as: DeviceInfo.self)
                    return (info?.lastSeen ?? .distantPast) > Date().addingTimeInterval(-2)
                }
            }
            #expect(
                Set(try await caller.call(BusContract.Service.tracking, "nearby", query, as: NearbyResult.self).devices.map(\.deviceID))
                    == everyone)

            // Every fix acknowledged is stored, once: the history holds exactly what the SDK saw acknowledged.
            for device in devices {
                device.isAvailable = false
                device.stopTracking()
            }
            let stopped = devices
            try await eventually("every fix is acknowledged", timeout: .seconds(30)) { stopped.allSatisfy { $0.statistics.unsent == 0 } }
            for device in devices {
                let stats = device.statistics
                let history = try await caller.call(
                    BusContract.Service.tracking, "locations", LocationsParams(deviceID: device.id, limit: 10_000), as: LocationHistory.self
                )
                #expect(stats.dropped == 0 && stats.rejected == 0, "\(device.id): \(stats)")
                #expect(
                    history.locations.count == Int(stats.acknowledged),
                    "\(device.id): stored \(history.locations.count), acknowledged \(stats.acknowledged)")
            }
            await caller.close()
            for device in devices { await device.close() }
        }
    }

    /// Adding a shard: of two planned shards one runs and serves every device; the second, started
    /// later, takes its own devices over (their stored state and history with them) without the
    /// first being restarted.
    @Test func onPostgreSQLAShardStartedLaterTakesItsDevicesFromTheRunningOne() async throws {
        let database = try await TestPostgresServer.newDatabase()
        try await withTestBus("shards-added") { bus in
            let arguments = ["--concurrency", "2", "--database-url", database.urlString]
            let first = try await TestTracking.start(
                on: bus, name: "tracking-0", shard: DeviceShard(index: 0, of: Self.shards), arguments: arguments)
            let (mine, its) = (Self.ids("a", shard: 0, count: 1)[0], Self.ids("a", shard: 1, count: 1)[0])
            // Shard 1 has never answered: after 3 s shard 0 serves its devices too.
            try await eventually("shard 0 counts shard 1 down") { try await first.health()["details"]?["live_shards"] == [0] }
            for (index, id) in [mine, its].enumerated() {
                let ack = try await first.call(
                    "ingest", Self.batch(id, id: 1, at: Self.center.destination(bearing: 0, distance: Double(index + 1) * 100)),
                    as: IngestAck.self)
                #expect(ack.accepted == 1)
            }
            #expect(try await first.health()["details"]?["devices"] == 2)

            let second = try await TestTracking.start(
                on: bus, name: "tracking-1", shard: DeviceShard(index: 1, of: Self.shards), arguments: arguments)
            try await eventually("shard 1 serves its device, shard 0 its own") {
                let (own, given) = (try await second.health(), try await first.health())
                return own["details"]?["devices"] == 1 && given["details"]?["devices"] == 1
            }
            let client = try await bus.client(timeout: .seconds(3))
            let served = try await client.call(
                BusContract.Service.trackingShard(1), "device", DeviceParams(deviceID: its), as: DeviceInfo.self)
            #expect(served.location != nil, "with the position shard 0 stored")
            let history = try await client.call(
                BusContract.Service.tracking, "locations", LocationsParams(deviceID: its), as: LocationHistory.self)
            #expect(history.locations.count == 1)
            let refused = try await client.callRaw(
                BusContract.Service.trackingShard(0), "device", json: Array(#"{"device_id":"\#(its)"}"#.utf8))
            #expect(refused.serviceError?.code == "wrong_shard", "shard 0 gave it back: \(refused)")
            #expect(
                try await client.call(
                    BusContract.Service.tracking, "nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 1000),
                    as: NearbyResult.self
                ).devices.count
                    == 2)
            await client.close()
        }
    }

    /// `count` ids `prefix-n` that hash to `shard` of 2.
    static func ids(_ prefix: String, shard: Int, count: Int) -> [String] {
        Array((0...).lazy.map { "\(prefix)-\($0)" }.filter { shards.owner(of: $0) == shard }.prefix(count))
    }

    static func batch(_ deviceID: String?, id: UInt64, at point: GeoPoint, secondsAgo: Double = 1) -> IngestBatch {
        IngestBatch(
            publishableKey: TestTracking.publishableKey, deviceID: deviceID, batchID: id,
            device: DeviceIntents(tracking: true, available: true),
            locations: [
                DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: Date().addingTimeInterval(-secondsAgo))
            ])
    }
}

/// Two tracking shards beside one bus, on one data directory, each with its own ingest endpoint.
struct TrackingShardsFixture {
    let shards: [TestTracking]

    /// Calls the public service `tracking` (the broker hands each request to either shard).
    var anyShard: TestTracking { shards[0] }
    /// What the SDK is given: the shards' ingest endpoints in shard order.
    var endpoints: [String] { shards.map(\.ingest) }

    static func start(on bus: TestBus, arguments: [String] = []) async throws -> TrackingShardsFixture {
        let first = try await TestTracking.start(
            on: bus, name: "tracking-0", shard: DeviceShard(index: 0, of: DeviceShards(count: 2)),
            arguments: ["--concurrency", "2"] + arguments)
        let second = try await TestTracking.start(
            on: bus, name: "tracking-1", shard: DeviceShard(index: 1, of: DeviceShards(count: 2)),
            dataOwner: first.name, arguments: ["--concurrency", "2"] + arguments)
        return TrackingShardsFixture(shards: [first, second])
    }
}

extension TestTracking {
    func health() async throws -> JSONValue {
        try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(healthURL).body))
    }

    /// The value of an unlabelled metric from /metrics (0 when absent).
    func metric(_ name: String) async throws -> Double {
        let text = try await HTTPProbe.get(metricsURL).text
        let row = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return row.flatMap { Double($0.split(separator: " ").last!) } ?? 0
    }
}
