import Bus
import Foundation
import Geo
import PlatformLauncher
import RideModels
import Synchronization
import Testing
import TrackingSDK
import Wire

/// HyperTrack's SDK interface (seeds/004) against a real `ride-tracking`: `location` as a `Result`
/// (`notRunning`, `starting`, a location, and its errors), `addGeotag`, and the four subscriptions
/// with their automatic stop when the handle is released.
@Suite(.timeLimit(.minutes(2))) struct TrackingSDKIntegrationTests {
    static let center = TrackingIntegrationTests.center

    /// A location source with no fix until it is opened (GPS still warming up).
    final class WarmingUp: LocationProvider {
        private let open = Atomic<Bool>(false)
        func warm() { open.store(true, ordering: .releasing) }
        func location(at time: Date) -> DeviceLocation? {
            guard open.load(ordering: .acquiring) else { return nil }
            return FixedLocation(TrackingSDKIntegrationTests.center).location(at: time)
        }
    }

    /// What a subscription's callback received, in order.
    final class Received<Value: Sendable>: Sendable {
        private let values = Mutex<[Value]>([])
        func append(_ value: Value) { values.withLock { $0.append(value) } }
        var all: [Value] { values.withLock { $0 } }
    }

    static let here = HyperTrack.Location(latitude: center.latitude, longitude: center.longitude)

    @Test func locationIsNotRunningThenStartingThenALocation() async throws {
        try await withTestBus("sdk-location") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let gps = WarmingUp()
            let device = try TrackingDevice(
                id: "sdk-location", configuration: tracking.sdkConfiguration(), provider: gps, runtime: DeviceRuntime())
            let received = Received<Result<HyperTrack.Location, HyperTrack.LocationError>>()
            let subscription = device.subscribeToLocation { received.append($0) }
            #expect(device.location == .failure(.notRunning), "neither tracking nor available")
            device.startTracking()
            #expect(device.location == .failure(.starting), "tracking, no fix yet")
            try await Task.sleep(for: .milliseconds(500))
            #expect(device.location == .failure(.starting), "still no fix from the source")
            gps.warm()
            try await eventually("a location") { device.location == .success(Self.here) }
            try await eventually("the platform has it") {
                try await tracking.call("device", DeviceParams(deviceID: "sdk-location"), as: DeviceInfo.self).location != nil
            }
            device.stopTracking()
            #expect(device.location == .failure(.notRunning))
            try await eventually("the subscriber saw each change once, in order") {
                received.all == [.failure(.notRunning), .failure(.starting), .success(Self.here), .failure(.notRunning)]
            }
            // Available without tracking also collects locations (the driver on duty, seen by Nearby).
            device.isAvailable = true
            try await eventually("a location again") { device.location == .success(Self.here) }
            subscription.cancel()
            await device.close()
        }
    }

    @Test func locationErrorsNameWhatBlocksTracking() async throws {
        try await withTestBus("sdk-location-errors") { bus in
            let tracking = try await TestTracking.start(on: bus)
            var strict = tracking.sdkConfiguration()
            strict.allowMockLocations = false
            let mocked = try TrackingDevice(
                id: "sdk-mocked", configuration: strict, provider: FixedLocation(Self.center, mocked: true), runtime: DeviceRuntime())
            let errors = Received<Set<HyperTrack.HyperTrackError>>()
            let subscription = mocked.subscribeToErrors { errors.append($0) }
            mocked.startTracking()
            try await eventually("a simulated location is refused") { mocked.location == .failure(.errors([.locationMocked])) }
            try await eventually("the errors stream says so") { errors.all == [[], [.locationMocked]] }
            #expect(mocked.errors == [.locationMocked])
            try await eventually("the platform knows the device, without a location") {
                (try? await tracking.call("device", DeviceParams(deviceID: "sdk-mocked"), as: DeviceInfo.self))?.tracking == true
            }
            #expect(try await tracking.call("device", DeviceParams(deviceID: "sdk-mocked"), as: DeviceInfo.self).location == nil)
            subscription.cancel()
            await mocked.close()

            var wrongKey = tracking.sdkConfiguration()
            wrongKey.publishableKey = "pk_nobody_knows"
            let refused = try TrackingDevice(
                id: "sdk-wrong-key", configuration: wrongKey, provider: FixedLocation(Self.center), runtime: DeviceRuntime())
            refused.startTracking()
            try await eventually("the platform's refusal of the key is an error") { refused.errors.contains(.invalidPublishableKey) }
            #expect(refused.location == .failure(.errors([.invalidPublishableKey])))
            #expect(try await tracking.callRaw("device", json: #"{"device_id":"sdk-wrong-key"}"#).status == 404, "nothing was stored")
            await refused.close()

            let noSource = try TrackingDevice(
                id: "sdk-no-source", configuration: tracking.sdkConfiguration(), provider: nil, runtime: DeviceRuntime())
            #expect(noSource.location == .failure(.notRunning))
            noSource.startTracking()
            #expect(noSource.location == .failure(.errors([.locationServicesUnavailable])))
            await noSource.close()
        }
    }

    @Test func aGeotagIsPinnedToTheCurrentLocationAndStored() async throws {
        try await withTestBus("sdk-geotag") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let device = try TrackingDevice(
                id: "sdk-geotag", configuration: tracking.sdkConfiguration(), provider: FixedLocation(Self.center), runtime: DeviceRuntime()
            )
            #expect(device.addGeotag(["order_id": "never"]) == .failure(.notRunning), "no location: no geotag")
            device.startTracking()
            try await eventually("a location") { device.location == .success(Self.here) }
            let pinned = device.addGeotag(["order_id": "o-1", "event": "pickup", "fare": ["cents": 1250]])
            #expect(pinned == .success(Self.here))
            try await eventually("the platform stored the geotag with its location") {
                let history = try await tracking.call("locations", LocationsParams(deviceID: "sdk-geotag"), as: LocationHistory.self)
                return history.geotags.contains {
                    $0.metadata == ["order_id": "o-1", "event": "pickup", "fare": ["cents": 1250]]
                        && abs($0.location.latitude - Self.center.latitude) < 1e-9
                }
            }
            let history = try await tracking.call("locations", LocationsParams(deviceID: "sdk-geotag"), as: LocationHistory.self)
            #expect(!history.geotags.contains { $0.metadata["order_id"] == "never" })
            await device.close()
        }
    }

    @Test func subscriptionsGiveTheCurrentValueThenChangesAndStopWhenReleased() async throws {
        try await withTestBus("sdk-subscriptions") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let device = try TrackingDevice(
                id: "sdk-subscribed", configuration: tracking.sdkConfiguration(), provider: FixedLocation(Self.center),
                runtime: DeviceRuntime())
            let availability = Received<Bool>()
            let trackingIntent = Received<Bool>()
            let errors = Received<Set<HyperTrack.HyperTrackError>>()
            let locations = Received<Result<HyperTrack.Location, HyperTrack.LocationError>>()
            var handles: [HyperTrack.Cancellable]? = [
                device.subscribeToAvailability { availability.append($0) },
                device.subscribeToTracking { trackingIntent.append($0) },
                device.subscribeToErrors { errors.append($0) },
                device.subscribeToLocation { locations.append($0) },
            ]
            // Not stored: stopped at once (at most the current value arrives).
            let unstored = Received<Bool>()
            _ = device.subscribeToAvailability { unstored.append($0) }

            device.isAvailable = true
            device.isAvailable = true
            device.startTracking()
            try await eventually("the platform knows the device") {
                (try? await tracking.call("device", DeviceParams(deviceID: "sdk-subscribed"), as: DeviceInfo.self))?.tracking == true
            }
            // Changes made by the platform reach the subscribers too.
            _ = try await tracking.call(
                "set_availability", SetAvailabilityParams(deviceID: "sdk-subscribed", available: false), as: DeviceInfo.self)
            try await eventually("availability: current, then each change once") { availability.all == [false, true, false] }
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "notifications", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "device.command.sdk-subscribed"))
            // A command is fire-and-forget (PUB/SUB): under load one can be lost on its way; sent
            // again until heard (a repeated stop changes nothing, so each change still comes once).
            for _ in 0..<10 where trackingIntent.all != [false, true, false] {
                try publisher.publish(
                    topic: "device.command.sdk-subscribed", type: "device.command",
                    data: DeviceCommandEvent(command: .stopTracking, issuedAt: Date()))
                try? await eventually("tracking: current, then each change once", timeout: .seconds(3)) {
                    trackingIntent.all == [false, true, false]
                }
            }
            #expect(trackingIntent.all == [false, true, false], "tracking: current, then each change once")
            #expect(errors.all == [[]], "nothing blocked tracking")
            #expect(locations.all.first == .failure(.notRunning) && locations.all.contains(.success(Self.here)), "\(locations.all)")
            #expect(unstored.all.count <= 1 && !unstored.all.contains(true), "an unstored subscription hears no change")

            handles = nil  // released: every subscription stops
            #expect(handles == nil)
            try await Task.sleep(for: .milliseconds(300))  // callbacks queued before the release have run
            let counts = (availability.all.count, trackingIntent.all.count, errors.all.count, locations.all.count)
            device.isAvailable = true
            device.startTracking()
            try await eventually("the platform heard the changes") {
                try await tracking.call("device", DeviceParams(deviceID: "sdk-subscribed"), as: DeviceInfo.self).available
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(availability.all.count == counts.0 && trackingIntent.all.count == counts.1, "released handles hear nothing more")
            #expect(errors.all.count == counts.2 && locations.all.count == counts.3)
            await publisher.close()
            await device.close()
        }
    }

    /// `sync()` lets the platform decide (the seed's `syncDeviceSettings`): tracking's word is the
    /// last tracking command published for the device — `start_tracking` when its driver's ride is
    /// accepted, `stop_tracking` when it ends — kept across a restart of tracking.
    @Test func syncLetsThePlatformDecideWhetherTheDeviceTracks() async throws {
        try await withTestBus("sdk-sync") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let device = try TrackingDevice(
                id: "sdk-sync", configuration: tracking.sdkConfiguration(), provider: FixedLocation(Self.center), runtime: DeviceRuntime())
            @Sendable func serverTracking() async throws -> Bool? {
                (try? await tracking.call("device", DeviceParams(deviceID: "sdk-sync"), as: DeviceInfo.self))?.tracking
            }
            // The app in the foreground tracks; going to the background it syncs: no ride, so it stops.
            device.startTracking()
            try await eventually("the platform knows the device tracks") { try await serverTracking() == true }
            device.sync()
            try await eventually("no ride: the sync stopped tracking") { !device.isTracking }
            try await eventually("and the device told the platform") { try await serverTracking() == false }

            // A ride accepted: start_tracking. The app stops tracking by itself; a sync starts it again.
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "notifications", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "device.command.sdk-sync"))
            func command(_ command: DeviceCommand) throws {
                try publisher.publish(
                    topic: "device.command.sdk-sync", type: "device.command", data: DeviceCommandEvent(command: command, issuedAt: Date()))
            }
            try command(.startTracking)
            try await eventually("the ride's command is obeyed") { device.isTracking }
            device.stopTracking()
            device.sync()
            try await eventually("a ride: the sync started tracking again") { device.isTracking }

            // Kept across a restart of tracking: the platform still says there is a ride.
            bus.supervisor.signal(tracking.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(tracking.name, timeout: .seconds(5))
            try await tracking.startProcess()
            device.stopTracking()
            device.sync()
            try await eventually("after the restart the sync still finds the ride", timeout: .seconds(30)) { device.isTracking }

            // The ride ends: stop_tracking. The app tracks in the foreground; the platform's `sync` command stops it.
            try command(.stopTracking)
            try await eventually("the ride's end is obeyed") { !device.isTracking }
            device.startTracking()
            try await eventually("the platform knows the device tracks again") { try await serverTracking() == true }
            try command(.sync)
            try await eventually("the platform's sync command asks, and no ride stops tracking") { !device.isTracking }
            await publisher.close()
            await device.close()
        }
    }

    /// A command published while no connection speaks for the device (its phone between
    /// connections; or lost on the bus) reaches it with the ack of its next batch.
    @Test func aCommandTheDeviceMissedComesWithTheAckOfItsNextBatch() async throws {
        try await withTestBus("sdk-missed-command") { bus in
            let tracking = try await TestTracking.start(on: bus)
            @Sendable func batch(_ id: Int) throws -> IngestAck {
                let reply = try IngestProbe.exchange(
                    endpoint: tracking.ingest, routingID: nil,
                    frames: ["batch", #"{"publishable_key":"pk_test","device_id":"missed","batch_id":\#(id),"locations":[]}"#])
                guard reply.first == "ack" else { throw TestFailure("\(reply)") }
                return try JSONCoding.decode(IngestAck.self, from: Array(reply.last!.utf8))
            }
            #expect(try batch(1).platformTrackingAt == nil)
            // Each probe's connection is gone when the command is published: nobody hears it.
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "notifications", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "device.command.missed"))
            let issued = Date()
            try publisher.publish(
                topic: "device.command.missed", type: "device.command", data: DeviceCommandEvent(command: .startTracking, issuedAt: issued))
            let next = Mutex(1)
            try await eventually("the next batch's ack carries the command") {
                let ack = try batch(
                    next.withLock {
                        $0 += 1
                        return $0
                    })
                return ack.platformTracking == true && ack.platformTrackingAt.map { abs($0.timeIntervalSince(issued)) < 0.002 } == true
            }
            await publisher.close()
        }
    }

    @Test func aSyncOnTheIngestSocketIsAnsweredAndBadSyncsAreRefused() async throws {
        try await withTestBus("sdk-sync-wire") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let synced = try IngestProbe.exchange(
                endpoint: tracking.ingest, routingID: "wire-sync",
                frames: [
                    "batch",
                    #"{"publishable_key":"pk_test","device_id":"wire-sync","batch_id":1,"device":{"tracking":true},"locations":[],"sync":true}"#,
                ])
            #expect(synced.first == "ack", "\(synced)")
            let ack = try JSONCoding.decode(IngestAck.self, from: Array(synced.last!.utf8))
            #expect(ack.platformTracking == false, "a device never given a ride: do not track")
            let plain = try IngestProbe.exchange(
                endpoint: tracking.ingest, routingID: "wire-sync",
                frames: ["batch", #"{"publishable_key":"pk_test","device_id":"wire-sync","batch_id":2,"locations":[]}"#])
            #expect(
                try JSONCoding.decode(IngestAck.self, from: Array(plain.last!.utf8)).platformTracking == nil,
                "no command yet: only a sync is answered")
            for bad in [#""yes""#, "{}"] {
                let reply = try IngestProbe.exchange(
                    endpoint: tracking.ingest, routingID: "wire-sync",
                    frames: ["batch", #"{"publishable_key":"pk_test","device_id":"wire-sync","batch_id":3,"locations":[],"sync":\#(bad)}"#])
                #expect(reply.first == "error", "sync \(bad) → \(reply)")
                let body = try JSONCoding.decode(JSONValue.self, from: Array(reply.last!.utf8))
                #expect(body["error"]?["code"] == "invalid_batch", "\(reply)")
                #expect(body["error"]?["message"]?.stringValue?.contains("sync") == true, "the error names the field: \(reply)")
            }
            let overBroker = try await tracking.callRaw(
                "ingest", json: #"{"publishable_key":"pk_test","device_id":"wire-sync","batch_id":4,"locations":[],"sync":"yes"}"#)
            #expect(
                overBroker.status == 400 || overBroker.status == 422,
                "\(overBroker.status) \(String(decoding: overBroker.json, as: UTF8.self))")
            #expect(try await HTTPProbe.get(tracking.healthURL).status == 200, "the service goes on")
        }
    }
}
