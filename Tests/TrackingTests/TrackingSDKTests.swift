import Bus
import Foundation
import Geo
import Logging
import RideModels
import Synchronization
import Testing
import Wire
import ZeroMQ

@testable import TrackingSDK

private let start = Date(timeIntervalSince1970: 1_795_253_400)

private func configuration(allowMock: Bool = true) -> SDKConfiguration {
    var configuration = SDKConfiguration(publishableKey: "pk")
    configuration.allowMockLocations = allowMock
    configuration.maximumBatch = 3
    configuration.maximumUnsent = 5
    return configuration
}

@Suite struct DeviceStateTests {
    let logger = Logger(label: "test")
    let provider = FixedLocation(GeoPoint(latitude: 47.8, longitude: 35.1))

    @Test func notCollectingUntilTrackingOrAvailable() {
        var state = DeviceState(name: "d", now: start)
        #expect(state.locationResult == .failure(.notRunning))
        state.sample(now: start, provider: provider, configuration: configuration())
        #expect(state.pending.isEmpty)
        state.setTracking(true, at: start)
        #expect(state.locationResult == .failure(.starting))
        state.sample(now: start, provider: provider, configuration: configuration())
        #expect(state.locationResult == .success(HyperTrack.Location(latitude: 47.8, longitude: 35.1)))
    }

    @Test func mockedLocationsAreBlockedUnlessAllowed() {
        var state = DeviceState(name: "d", now: start)
        state.setTracking(true, at: start)
        state.sample(now: start, provider: provider, configuration: configuration(allowMock: false))
        #expect(state.blocking == [.locationMocked])
        #expect(state.locationResult == .failure(.errors([.locationMocked])))
        #expect(state.pending.isEmpty, "a mocked location is not sent")
    }

    @Test func batchesCarryIntentsAndAreResentWithBackoffUntilAcknowledged() throws {
        let config = configuration()
        var state = DeviceState(name: "Ann", now: start)
        state.setTracking(true, at: start)
        for second in 0..<4 { state.sample(now: start.addingTimeInterval(Double(second)), provider: provider, configuration: config) }
        func send(at seconds: TimeInterval) -> [Frame]? {
            state.outbound(now: start.addingTimeInterval(seconds), configuration: config, deviceID: "d")
        }
        let first = try #require(send(at: 4))
        let batch = try JSONCoding.decode(IngestBatch.self, from: first[1])
        #expect(batch.locations.count == 3, "at most maximumBatch")
        #expect(batch.device?.name == "Ann")
        let whileInFlight = send(at: 5)
        #expect(whileInFlight == nil, "one batch in flight")
        // No ack: sent again after 3 s, then 6 s more (same batch id).
        let firstRetry = send(at: 7)
        #expect(firstRetry == first)
        let tooEarly = send(at: 12)
        #expect(tooEarly == nil)
        let secondRetry = send(at: 13)
        #expect(secondRetry == first)
        #expect(state.stats.resends == 2)
        state.acknowledge(
            IngestAck(batchID: batch.batchID, accepted: 3, rejected: [], device: DeviceIntents()), now: start.addingTimeInterval(14),
            logger: logger)
        #expect(state.inFlight == nil)
        #expect(state.stats.acknowledged == 3)
        let second = try #require(send(at: 14))
        let next = try JSONCoding.decode(IngestBatch.self, from: second[1])
        #expect(next.batchID == batch.batchID + 1)
        #expect(next.device == nil, "intents are sent once")
    }

    @Test func theOldestLocationsAreDroppedBeyondTheLimitAndCounted() {
        var state = DeviceState(name: "d", now: start)
        state.setTracking(true, at: start)
        for second in 0..<8 {
            state.sample(now: start.addingTimeInterval(Double(second)), provider: provider, configuration: configuration())
        }
        #expect(state.pending.count == 5)
        #expect(state.stats.dropped == 3)
        #expect(state.pending.first?.recordedAt == start.addingTimeInterval(3))
    }

    @Test func newerIntentsFromThePlatformWin() {
        var state = DeviceState(name: "d", now: start)
        state.intentsUnsent = false
        state.inFlight = DeviceState.InFlight(
            batch: IngestBatch(publishableKey: "pk", batchID: 1, locations: []), frames: [], sentAt: start, attempts: 1)
        state.acknowledge(
            IngestAck(
                batchID: 1, accepted: 0, rejected: [],
                device: DeviceIntents(tracking: true, available: true, changedAt: start.addingTimeInterval(10))),
            now: start.addingTimeInterval(11), logger: logger)
        #expect(state.tracking && state.available)
    }

    /// A sync's batch says so; its ack's `platform_tracking` decides, and the device reports it back.
    /// Only a sync's ack is obeyed so; a `sync` command asks the same way.
    @Test func aSyncAsksThePlatformAndObeysItsAnswer() throws {
        var state = DeviceState(name: "d", now: start)
        state.setTracking(true, at: start)
        state.syncRequested = true
        let sent = state.outbound(now: start, configuration: configuration(), deviceID: "d")
        let frames = try #require(sent)
        #expect(try JSONCoding.decode(IngestBatch.self, from: frames[1]).sync == true)
        #expect(!state.syncRequested)
        let ack = IngestAck(
            batchID: 1, accepted: 0, rejected: [], device: DeviceIntents(tracking: true, changedAt: start), platformTracking: false)
        state.acknowledge(ack, now: start.addingTimeInterval(1), logger: logger)
        #expect(!state.tracking, "no ride: tracking stops")
        #expect(state.intentsUnsent, "and the platform is told")

        state.setTracking(true, at: start.addingTimeInterval(2))
        _ = state.outbound(now: start.addingTimeInterval(3), configuration: configuration(), deviceID: "d")
        #expect(state.inFlight?.batch.sync == nil)
        state.acknowledge(
            IngestAck(batchID: 2, accepted: 0, rejected: [], device: DeviceIntents(), platformTracking: false),
            now: start.addingTimeInterval(4), logger: logger)
        #expect(state.tracking, "an answer to a batch that did not ask changes nothing")

        let obeyed = state.obey(DeviceCommandEvent(command: .sync), now: start.addingTimeInterval(5))
        #expect(obeyed)
        #expect(state.syncRequested)
    }

    /// A tracking command the device never heard (lost on the bus, or sent while it was between
    /// connections) comes with the next ack, with its issue time, and is obeyed by a command's rule.
    @Test func aMissedTrackingCommandIsObeyedFromTheNextAck() {
        var state = DeviceState(name: "d", now: start)
        state.setTracking(true, at: start)
        let first = state.outbound(now: start.addingTimeInterval(1), configuration: configuration(), deviceID: "d")
        #expect(first != nil)
        let stop = (tracking: false, at: start.addingTimeInterval(2))
        func ack(_ batch: UInt64) -> IngestAck {
            IngestAck(
                batchID: batch, accepted: 0, rejected: [], device: DeviceIntents(), platformTracking: stop.tracking,
                platformTrackingAt: stop.at)
        }
        state.acknowledge(ack(1), now: start.addingTimeInterval(3), logger: logger)
        #expect(!state.tracking, "the ride's stop, missed, is obeyed")
        #expect(state.intentsUnsent, "and the platform is told")

        // The app starts tracking after it: the same word, older than that, changes nothing.
        state.setTracking(true, at: start.addingTimeInterval(10))
        let second = state.outbound(now: start.addingTimeInterval(11), configuration: configuration(), deviceID: "d")
        #expect(second?.isEmpty == false, "the app's change is sent")
        state.acknowledge(ack(2), now: start.addingTimeInterval(12), logger: logger)
        #expect(state.tracking, "a word older than the app's own change is not obeyed")
    }

    /// The stop of a driver's last ride arriving after the start of the next (a reordering the
    /// notifications service cannot rule out) must not stop tracking mid-ride.
    @Test func aTrackingCommandOlderThanTheLastTrackingChangeIsIgnored() {
        var state = DeviceState(name: "d", now: start)
        let (lastRideEnded, nextRideAccepted) = (start.addingTimeInterval(10), start.addingTimeInterval(12))
        var obeyed = state.obey(DeviceCommandEvent(command: .startTracking, issuedAt: nextRideAccepted), now: start.addingTimeInterval(13))
        #expect(obeyed)
        #expect(state.tracking && state.intentsUnsent)
        obeyed = state.obey(DeviceCommandEvent(command: .stopTracking, issuedAt: lastRideEnded), now: start.addingTimeInterval(14))
        #expect(!obeyed)
        #expect(state.tracking, "the late stop of the last ride changed nothing")
        obeyed = state.obey(
            DeviceCommandEvent(command: .stopTracking, issuedAt: start.addingTimeInterval(30)), now: start.addingTimeInterval(31))
        #expect(obeyed)
        #expect(!state.tracking, "the next ride's own stop is obeyed")
        // The app's own change counts too; a command without an issue time is obeyed.
        state.setTracking(true, at: start.addingTimeInterval(40))
        obeyed = state.obey(
            DeviceCommandEvent(command: .stopTracking, issuedAt: start.addingTimeInterval(35)), now: start.addingTimeInterval(41))
        #expect(!obeyed)
        obeyed = state.obey(DeviceCommandEvent(command: .stopTracking), now: start.addingTimeInterval(42))
        #expect(obeyed)
        #expect(!state.tracking)
    }

    @Test func anInvalidKeyIsAnErrorUntilAcknowledged() {
        var state = DeviceState(name: "d", now: start)
        state.inFlight = DeviceState.InFlight(
            batch: IngestBatch(publishableKey: "pk", batchID: 1, locations: []), frames: [], sentAt: start, attempts: 1)
        state.refused(Array(#"{"error":{"code":"invalid_publishable_key","message":"no"}}"#.utf8), now: start, logger: logger)
        #expect(state.blocking == [.invalidPublishableKey])
        #expect(state.inFlight != nil, "kept, to be sent again")
        state.acknowledge(IngestAck(batchID: 1, accepted: 0, rejected: [], device: DeviceIntents()), now: start, logger: logger)
        #expect(state.blocking.isEmpty)
    }

    @Test func aRefusedCredentialKeepsTheBatchUntilANewOneSendsItAtOnce() throws {
        var state = DeviceState(name: "d", credential: "dc1.old", now: start)
        let configuration = SDKConfiguration(publishableKey: "pk")
        state.pending.append(DeviceLocation(latitude: 1, longitude: 2, recordedAt: start, accuracy: 5))
        let sent = state.outbound(now: start, configuration: configuration, deviceID: "d")
        let first = try #require(sent)
        #expect(try JSONCoding.decode(IngestBatch.self, from: first[1]).deviceCredential == "dc1.old")
        for code in ["credential_required", "credential_invalid", "credential_revoked"] {
            state.refused(Array(#"{"error":{"code":"\#(code)","message":"no"}}"#.utf8), now: start, logger: logger)
            #expect(state.blocking == [.invalidDeviceCredential], "\(code)")
            #expect(state.inFlight != nil, "kept, to be sent again")
        }
        let early = state.outbound(now: start.addingTimeInterval(0.1), configuration: configuration, deviceID: "d")
        #expect(early == nil, "not before the backoff")
        state.setCredential("dc1.new")
        #expect(state.blocking.isEmpty)
        let resent = state.outbound(now: start.addingTimeInterval(0.2), configuration: configuration, deviceID: "d")
        let again = try #require(resent, "at once with the new credential")
        let batch = try JSONCoding.decode(IngestBatch.self, from: again[1])
        #expect(batch.deviceCredential == "dc1.new" && batch.batchID == 1 && batch.locations.count == 1)
    }
}

@Suite struct SubscriptionTests {
    final class Seen: Sendable {
        let values = Mutex<[Bool]>([])
        func add(_ value: Bool) { values.withLock { $0.append(value) } }
        var all: [Bool] { values.withLock { $0 } }
    }

    @Test func currentValueFirstThenOnlyChangesUntilCancelled() async throws {
        let queue = DispatchQueue(label: "test")
        let subscribers = Subscribers<Bool>(queue: queue)
        let seen = Seen()
        let handle = subscribers.add(current: false) { seen.add($0) }
        subscribers.publish(false)
        subscribers.publish(true)
        subscribers.publish(true)
        subscribers.publish(false)
        handle.cancel()
        subscribers.publish(true)
        queue.sync {}
        #expect(seen.all == [false, true, false])
    }

    @Test func releasingTheHandleStopsTheSubscription() {
        let queue = DispatchQueue(label: "test")
        let subscribers = Subscribers<Bool>(queue: queue)
        let seen = Seen()
        do {
            let handle = subscribers.add(current: true) { seen.add($0) }
            _ = handle
        }
        subscribers.publish(false)
        queue.sync {}
        #expect(seen.all == [true])
        #expect(subscribers.isEmpty)
    }
}

@Suite struct SDKConfigurationTests {
    @Test func readsTheSpecsKeysFromTheEnvironment() throws {
        let configuration = try SDKConfiguration.load(environment: [
            "HyperTrackPublishableKey": "pk_1", "HyperTrackAllowMockLocations": "true", "HyperTrackLoggingEnabled": "yes",
            "HyperTrackAutomaticallyRequestPermissions": "false", "HyperTrackDeviceID": "dev-1",
            "RIDE_TRACKING_INGEST": "tcp://tracking:5558",
        ])
        #expect(configuration.publishableKey == "pk_1")
        #expect(configuration.allowMockLocations && configuration.loggingEnabled && !configuration.automaticallyRequestPermissions)
        #expect(configuration.deviceID == "dev-1")
        #expect(configuration.endpoints == ["tcp://tracking:5558"])
        #expect(try configuration.endpoint(for: "dev-1") == "tcp://tracking:5558", "one endpoint: every device sends there")
    }

    @Test func aListOfEndpointsIsOnePerShardAndEachDeviceSendsToItsShards() throws {
        let configuration = try SDKConfiguration.load(environment: [
            "HyperTrackPublishableKey": "pk_1", "RIDE_TRACKING_INGEST": "tcp://shard0:5558, tcp://shard1:5558",
        ])
        #expect(configuration.endpoints == ["tcp://shard0:5558", "tcp://shard1:5558"])
        let shards = DeviceShards(count: 2)
        for id in ["driver-1", "driver-2", "driver-3", "s-2"] {
            #expect(try configuration.endpoint(for: id) == configuration.endpoints[shards.owner(of: id)])
        }
        #expect(try configuration.endpoint(for: "driver-1") == "tcp://shard0:5558")
        #expect(try configuration.endpoint(for: "driver-2") == "tcp://shard1:5558")
    }

    @Test(arguments: [
        ("tcp://a:1,,tcp://b:2", "one is empty"),
        (Array(repeating: "tcp://a:1", count: 65).joined(separator: ","), "from 1 to 64 shards"),
    ])
    func aBadEndpointListIsRefused(text: String, message: String) {
        #expect {
            try SDKConfiguration.load(environment: ["HyperTrackPublishableKey": "pk_1", "RIDE_TRACKING_INGEST": text])
        } throws: { error in
            "\(error)".contains("RIDE_TRACKING_INGEST") && "\(error)".contains(message)
        }
        var configuration = SDKConfiguration(publishableKey: "pk_1")
        configuration.endpoints = []
        #expect(throws: SDKConfiguration.Problem.self) {
            try TrackingDevice(id: "d", configuration: configuration, provider: nil, runtime: DeviceRuntime())
        }
    }

    @Test func readsAJSONFileAndTheEnvironmentWins() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ht-\(UUID().uuidString).json")
        try Data(#"{"HyperTrackPublishableKey":"from-file","HyperTrackAllowMockLocations":true}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try SDKConfiguration.load(environment: ["HYPERTRACK_CONFIG": file.path])
        #expect(fromFile.publishableKey == "from-file")
        #expect(fromFile.allowMockLocations)
        let overridden = try SDKConfiguration.load(environment: ["HYPERTRACK_CONFIG": file.path, "HyperTrackPublishableKey": "from-env"])
        #expect(overridden.publishableKey == "from-env")
    }

    @Test func badValuesAreNamed() {
        #expect(throws: SDKConfiguration.Problem.self) { try SDKConfiguration.load(environment: ["HyperTrackAllowMockLocations": "maybe"]) }
        #expect(throws: SDKConfiguration.Problem.self) {
            try SDKConfiguration.load(environment: ["HYPERTRACK_CONFIG": "/nonexistent.json"])
        }
        #expect(SDKConfiguration.missingKeyMessage.contains("HyperTrackPublishableKey"))
        #expect(throws: SDKConfiguration.Problem.self) { try TrackingDevice(id: "x", configuration: SDKConfiguration(), provider: nil) }
    }
}

@Suite struct LocationSourceTests {
    @Test func aGPXTrackIsReplayedAtItsPace() throws {
        let gpx = """
            <?xml version="1.0"?><gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>t</name><trkseg>
            <trkpt lat="47.0" lon="35.0"><ele>10</ele><time>2026-11-21T09:00:00Z</time></trkpt>
            <trkpt lat="47.001" lon="35.0"><ele>20</ele><time>2026-11-21T09:00:10Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let track = try GPXTrack.parse(Data(gpx.utf8))
        #expect(track.name == "t")
        #expect(track.points.count == 2)
        let replay = GPXReplay(track: track, startedAt: start)
        let middle = try #require(replay.location(at: start.addingTimeInterval(5)))
        #expect(abs(middle.latitude - 47.0005) < 1e-6)
        #expect(middle.altitude == 15)
        #expect(middle.mocked == true)
        #expect(abs((middle.speed ?? 0) - 11.1) < 0.1)
        let after = try #require(replay.location(at: start.addingTimeInterval(60)))
        #expect(after.latitude == 47.001 && after.speed == 0)
    }

    @Test func badGPXIsRefusedWithAReason() {
        #expect(throws: GPXTrack.ParseError.empty) { try GPXTrack.parse(Data("<gpx></gpx>".utf8)) }
        #expect(throws: GPXTrack.ParseError.self) {
            try GPXTrack.parse(Data("<gpx><trk><trkseg><trkpt lat=\"x\"/></trkseg></trk></gpx>".utf8))
        }
        #expect(throws: GPXTrack.ParseError.self) { try GPXTrack.parse(Data("not xml at all <".utf8)) }
    }

    @Test func aSimulatedDriveFollowsItsRouteAndStops() {
        let route = Polyline(points: [GeoPoint(latitude: 47, longitude: 35), GeoPoint(latitude: 47.01, longitude: 35)])
        let drive = SimulatedDrive(at: route.points[0])
        drive.drive(along: route, speed: 10, from: start)
        let halfway = drive.position(at: start.addingTimeInterval(route.length / 20))
        #expect(abs(halfway.point.distance(to: route.point(atDistance: route.length / 2))) < 0.01)
        #expect(!halfway.arrived)
        let end = drive.position(at: start.addingTimeInterval(route.length / 10 + 1))
        #expect(end.arrived && end.point == route.points[1])
    }

    @Test func aTimedDriveKeepsItsTimetableStopsInTrafficAndRefusesABadOne() {
        let a = GeoPoint(latitude: 47, longitude: 35)
        let b = a.destination(bearing: 0, distance: 1000)
        let c = b.destination(bearing: 90, distance: 500)
        // 1 000 m in 100 s, 60 s standing at b, then 500 m in 100 s.
        let route = Polyline(points: [a, b, b, c])
        let drive = SimulatedDrive(at: a, speedup: 2)
        #expect(drive.drive(along: route, times: [0, 100, 160, 260], from: start))
        let early = drive.position(at: start.addingTimeInterval(25))  // 50 s of the timetable
        #expect(early.point.distance(to: a.destination(bearing: 0, distance: 500)) < 0.5 && abs(early.speed - 20) < 0.01)
        let stopped = drive.position(at: start.addingTimeInterval(65))  // 130 s: in the jam
        #expect(stopped.point.distance(to: b) < 0.5 && stopped.speed == 0 && !stopped.arrived)
        let late = drive.position(at: start.addingTimeInterval(105))  // 210 s: half-way along b→c
        #expect(late.point.distance(to: b.destination(bearing: 90, distance: 250)) < 0.5)
        #expect(drive.position(at: start.addingTimeInterval(131)).arrived)
        let other = SimulatedDrive(at: a)
        #expect(!other.drive(along: route, times: [0, 100, 50, 260], from: start), "time going back")
        #expect(!other.drive(along: route, times: [0, 100], from: start), "not one time per point")
        #expect(other.position(at: start.addingTimeInterval(10)).point == a, "refused: the car stays")
    }
}

/// A device of a sharded platform: sent to its home shard's ingest, on to the next of its ranking
/// when no acknowledgement comes, and to the shard a `wrong_shard` refusal names.
@Suite struct DeviceShardFollowingTests {
    let logger = Logger(label: "test")

    @Test func aDeviceMovesOnWhenItsShardIsSilentAndGoesWhereARefusalPointsIt() throws {
        var config = configuration()
        config.endpoints = ["tcp://a:1", "tcp://b:2", "tcp://c:3"]
        let ranking = try config.shardRanking(for: "d")
        let home = try config.endpoint(for: "d")
        #expect(ranking.count == 3 && config.endpoints[ranking[0]] == home)
        var state = DeviceState(name: "d", now: start)
        state.shardRanking = ranking
        state.setTracking(true, at: start)
        state.sample(now: start, provider: FixedLocation(GeoPoint(latitude: 47.8, longitude: 35.1)), configuration: config)
        let sent = state.outbound(now: start, configuration: config, deviceID: "d")
        let first = try #require(sent)
        #expect(state.shard == ranking[0])
        // No acknowledgement within 3 s: the same batch goes to the next shard of the ranking.
        let resent = state.outbound(now: start.addingTimeInterval(3), configuration: config, deviceID: "d")
        #expect(resent == first)
        #expect(state.shard == ranking[1] && state.stats.shardSwitches == 1)
        // That shard names the one serving the device: the batch goes there at once.
        let refusal = #"{"error":{"code":"wrong_shard","message":"served by another"},"batch_id":1,"shard":\#(ranking[2])}"#
        state.refused(Array(refusal.utf8), now: start.addingTimeInterval(3.1), logger: logger)
        #expect(state.shard == ranking[2] && state.inFlight != nil, "kept, not given up")
        let redirected = state.outbound(now: start.addingTimeInterval(3.2), configuration: config, deviceID: "d")
        #expect(redirected == first)
        // A refusal naming no shard it knows does not move it (and drops a batch it cannot fix).
        state.refused(
            Array(#"{"error":{"code":"wrong_shard","message":"?"},"shard":7}"#.utf8), now: start.addingTimeInterval(4), logger: logger)
        #expect(state.shard == ranking[2])
    }

    @Test func aBatchItsShardAnsweredWaitsThereAndARedirectIsNoAttempt() throws {
        var config = configuration()
        config.endpoints = ["tcp://a:1", "tcp://b:2", "tcp://c:3"]
        var state = DeviceState(name: "d", now: start)
        state.shardRanking = try config.shardRanking(for: "d")
        state.setTracking(true, at: start)
        state.sample(now: start, provider: FixedLocation(GeoPoint(latitude: 47.8, longitude: 35.1)), configuration: config)
        _ = state.outbound(now: start, configuration: config, deviceID: "d")
        // Busy, not gone: the batch is sent to the same shard when the backoff ends.
        state.refused(
            Array(#"{"error":{"code":"store_unavailable","message":"busy"},"batch_id":1}"#.utf8), now: start.addingTimeInterval(0.1),
            logger: logger)
        _ = state.outbound(now: start.addingTimeInterval(3), configuration: config, deviceID: "d")
        #expect(state.shard == state.shardRanking[0] && state.stats.shardSwitches == 0)
        #expect(state.inFlight?.attempts == 2)
        // A redirect sends it at once, and the backoff does not grow for it.
        let refusal = #"{"error":{"code":"wrong_shard","message":"elsewhere"},"batch_id":1,"shard":\#(state.shardRanking[1])}"#
        state.refused(Array(refusal.utf8), now: start.addingTimeInterval(3.1), logger: logger)
        _ = state.outbound(now: start.addingTimeInterval(3.2), configuration: config, deviceID: "d")
        #expect(state.shard == state.shardRanking[1] && state.inFlight?.attempts == 2)
    }

    @Test func anUnshardedDeviceStaysOnItsOneEndpoint() throws {
        let config = configuration()
        var state = DeviceState(name: "d", now: start)
        state.shardRanking = try config.shardRanking(for: "d")
        state.setTracking(true, at: start)
        state.sample(now: start, provider: FixedLocation(GeoPoint(latitude: 47.8, longitude: 35.1)), configuration: config)
        _ = state.outbound(now: start, configuration: config, deviceID: "d")
        _ = state.outbound(now: start.addingTimeInterval(3), configuration: config, deviceID: "d")
        #expect(state.shard == 0 && state.stats.shardSwitches == 0)
    }
}
