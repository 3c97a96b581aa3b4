import Bus
import Foundation
import Geo
import PlatformLauncher
import RideModels
import ServiceKit
import Testing
import TrackingSDK
import Wire
import ZeroMQ

/// ride-tracking with devices that use the TrackingSDK, all over real sockets.
@Suite(.timeLimit(.minutes(2))) struct TrackingIntegrationTests {
    static let center = GeoPoint(latitude: 47.8359, longitude: 35.1146)

    @Test func sdkDevicesStreamAndNearbyAnswersNearestFirst() async throws {
        try await withTestBus("nearby") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let runtime = DeviceRuntime()
            var devices: [TrackingDevice] = []
            for i in 0..<12 {
                let point = Self.center.destination(bearing: Double(i) * 30, distance: Double(i + 1) * 150)
                let device = try TrackingDevice(
                    id: "car-\(i)", configuration: tracking.sdkConfiguration(), provider: FixedLocation(point), runtime: runtime)
                device.name = "Driver \(i)"
                device.metadata = ["car": .object(["model": .string(i % 3 == 0 ? "Leaf" : "Prius")])]
                device.isAvailable = i % 2 == 0
                device.startTracking()
                devices.append(device)
            }
            let everyone = NearbyQuery(location: GeoJSONPoint(Self.center), radius: 5000, limit: 50)
            try await eventually("all 12 devices are found") {
                try await tracking.call("nearby", everyone, as: NearbyResult.self).devices.count == 12
            }
            let result = try await tracking.call("nearby", everyone, as: NearbyResult.self)
            #expect(result.devices.map(\.deviceID) == (0..<12).map { "car-\($0)" }, "nearest first")
            #expect(abs(result.devices[0].distance - 150) < 1)
            #expect(result.devices[0].name == "Driver 0")
            let available = try await tracking.call(
                "nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 5000, availableOnly: true), as: NearbyResult.self)
            #expect(available.devices.map(\.deviceID) == ["car-0", "car-2", "car-4", "car-6", "car-8", "car-10"], "available ones only")
            let leafs = try await tracking.call(
                "nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 5000, metadata: ["car": ["model": "Leaf"]]),
                as: NearbyResult.self)
            #expect(leafs.devices.map(\.deviceID) == ["car-0", "car-3", "car-6", "car-9"])
            let close = try await tracking.call(
                "nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 460), as: NearbyResult.self)
            #expect(close.devices.map(\.deviceID) == ["car-0", "car-1", "car-2"])
            for device in devices { await device.close() }
        }
    }

    @Test func aSilentDeviceBecomesInactiveAndSaysSo() async throws {
        try await withTestBus("inactive") { bus in
            let tracking = try await TestTracking.start(on: bus, inactiveAfterSeconds: 1)
            let subscriber = try await EventSubscriber<DeviceStatusEvent>(
                endpoint: bus.egress, prefixes: ["device.status.quiet"], logger: testLogger)
            let runtime = DeviceRuntime()
            let device = try TrackingDevice(
                id: "quiet", configuration: tracking.sdkConfiguration(), provider: FixedLocation(Self.center), runtime: runtime)
            device.startTracking()
            // Active is asked for (the event may come before the subscription reaches the bus);
            // inactive comes a second after the device falls silent, long after that.
            try await eventually("the device is active") {
                (try? await tracking.call("device", DeviceParams(deviceID: "quiet"), as: DeviceInfo.self))?.status == .active
            }
            await device.close()
            let inactive = try await firstEvent(subscriber, timeout: .seconds(20)) { $0.value == .inactive }
            let statuses = [inactive.event.data]
            #expect(statuses.last == DeviceStatusEvent(deviceID: "quiet", value: .inactive, available: false, reason: "silence"))
            let info = try await tracking.call("device", DeviceParams(deviceID: "quiet"), as: DeviceInfo.self)
            #expect(info.status == .inactive)
            #expect(info.tracking)
            await subscriber.close()
        }
    }

    @Test func theSDKSurvivesARestartOfTrackingAndLosesNothing() async throws {
        try await withTestBus("restart") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let runtime = DeviceRuntime()
            let drive = SimulatedDrive(at: Self.center)
            drive.drive(along: Polyline(points: [Self.center, Self.center.destination(bearing: 90, distance: 5000)]), speed: 10)
            let device = try TrackingDevice(id: "survivor", configuration: tracking.sdkConfiguration(), provider: drive, runtime: runtime)
            device.startTracking()
            try await eventually("some locations are acknowledged") { device.statistics.acknowledged >= 5 }
            let acknowledgedBefore = device.statistics.acknowledged

            bus.supervisor.signal(tracking.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(tracking.name, timeout: .seconds(5))
            // The device keeps sampling while tracking is down; nothing is acknowledged.
            try await eventually("locations wait unacknowledged") { device.statistics.unsent >= 10 }
            try await tracking.startProcess()
            device.stopTracking()
            try await eventually("everything is acknowledged after the restart", timeout: .seconds(30)) {
                device.statistics.unsent == 0 && device.statistics.acknowledged > acknowledgedBefore
            }
            let stats = device.statistics
            #expect(stats.dropped == 0 && stats.rejected == 0)
            #expect(stats.acknowledged == stats.sampled, "every location sampled was stored")
            #expect(stats.resends >= 1, "the batch in flight at the crash was sent again")
            let history = try await tracking.call(
                "locations", LocationsParams(deviceID: "survivor", limit: 10_000), as: LocationHistory.self)
            #expect(UInt64(history.locations.count) == stats.acknowledged, "stored once each: a resent location is not stored twice")
            #expect(history.locations.map(\.recordedAt) == history.locations.map(\.recordedAt).sorted())
            await device.close()
        }
    }

    @Test func badInputOnTheIngestSocketIsAnsweredAndTheServiceGoesOn() async throws {
        try await withTestBus("ingest-abuse") { bus in
            let tracking = try await TestTracking.start(on: bus)
            for size in [1, 9, 300, 5000] {
                RawTCP.send(port: tracking.ingestPort, bytes: (0..<size).map { _ in UInt8.random(in: 0...255) })
            }
            let now = RFC3339.format(Date())
            let good = #"{"latitude":47.8,"longitude":35.1,"recorded_at":"\#(now)"}"#
            let bad = #"{"latitude":47.8,"longitude":200,"recorded_at":"\#(now)"}"#
            let manyLocations = Array(repeating: good, count: 1001).joined(separator: ",")
            let cases: [(routingID: String?, frames: [String], code: String)] = [
                (nil, ["batch", #"{"publishable_key":"pk_test","batch_id":1,"locations":[]}"#], "invalid_device_id"),
                ("dev-1", ["batch"], "bad_frame"),
                ("dev-1", ["hello", "{}"], "bad_frame"),
                ("dev-1", ["batch", "{not json"], "invalid_batch"),
                ("dev-1", ["batch", #"{"publishable_key":"pk_test","batch_id":"one","locations":[]}"#], "invalid_batch"),
                (
                    "dev-1", ["batch", #"{"publishable_key":"wrong","device_id":"dev-1","batch_id":1,"locations":[]}"#],
                    "invalid_publishable_key"
                ),
                (
                    "dev-1", ["batch", #"{"publishable_key":"pk_test","device_id":"dev-1","batch_id":1,"locations":[\#(manyLocations)]}"#],
                    "batch_too_large"
                ),
                (
                    "dev-1", ["batch", #"{"publishable_key":"pk_test","device_id":"bad id","batch_id":1,"locations":[]}"#],
                    "invalid_device_id"
                ),
            ]
            for (routingID, frames, code) in cases {
                let reply = try IngestProbe.exchange(endpoint: tracking.ingest, routingID: routingID, frames: frames)
                #expect(reply.first == "error", "\(frames.first ?? "") → \(reply)")
                let body = try JSONCoding.decode(JSONValue.self, from: Array(reply.last!.utf8))
                #expect(body["error"]?["code"]?.stringValue == code, "\(reply)")
            }
            // A batch with a bad location: the good one still counts, the bad one is named.
            let mixed = try IngestProbe.exchange(
                endpoint: tracking.ingest, routingID: "dev-1",
                frames: [
                    "batch",
                    #"{"publishable_key":"pk_test","device_id":"dev-1","batch_id":7,"device":{"tracking":true},"locations":[\#(good),\#(bad)]}"#,
                ])
            #expect(mixed.first == "ack")
            let ack = try JSONCoding.decode(IngestAck.self, from: Array(mixed.last!.utf8))
            #expect(ack.batchID == 7 && ack.accepted == 1)
            #expect(ack.rejected.map(\.field) == ["locations[1].longitude"])

            // Still serving: an SDK device streams and is found.
            let device = try TrackingDevice(
                id: "after-abuse", configuration: tracking.sdkConfiguration(), provider: FixedLocation(Self.center),
                runtime: DeviceRuntime())
            device.startTracking()
            try await eventually("the device is found") {
                try await tracking.call("nearby", NearbyQuery(location: GeoJSONPoint(Self.center), radius: 100), as: NearbyResult.self)
                    .devices.contains { $0.deviceID == "after-abuse" }
            }
            #expect(try await HTTPProbe.get(tracking.healthURL).status == 200)
            let refused = try await HTTPProbe.get(tracking.metricsURL).text
            #expect(refused.contains("ride_tracking_refused_batches_total"))
            #expect(tracking.log.contains("ingest message refused"), "bad input is logged")
            await device.close()
        }
    }

    @Test func opsAnswerBadInputWithClearErrorsAndChangeNothing() async throws {
        try await withTestBus("tracking-ops") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let point = #"{"type":"Point","coordinates":[35.1,47.8]}"#
            let cases: [(String, String, Int, String)] = [
                ("nearby", #"{"location":\#(point),"radius":0}"#, 422, "radius"),
                ("nearby", #"{"location":\#(point),"radius":100,"limit":5000}"#, 422, "limit"),
                ("nearby", #"{"location":{"type":"Polygon","coordinates":[1,2]},"radius":100}"#, 422, "location.type"),
                ("nearby", #"{"location":{"type":"Point","coordinates":[1]},"radius":100}"#, 422, "location.coordinates"),
                ("nearby", #"{"radius":100}"#, 422, "location"),
                ("nearby", #"{"location":\#(point),"radius":100,"last_updated_within":-1}"#, 422, "last_updated_within"),
                ("device", #"{"device_id":"nobody"}"#, 404, "nobody"),
                ("locations", #"{"device_id":"nobody"}"#, 404, "nobody"),
                ("set_availability", #"{"device_id":"nobody","available":true}"#, 404, "nobody"),
                ("set_availability", #"{"device_id":"x"}"#, 422, "available"),
                ("ingest", #"{"publishable_key":"pk_test","batch_id":1,"locations":[]}"#, 422, "device_id"),
                ("ingest", #"{"publishable_key":"bad","device_id":"x","batch_id":1,"locations":[]}"#, 401, "publishable_key"),
                ("nearby", "[1,2]", 422, "(document)"),
                ("nearby", "{oops", 400, "JSON"),
            ]
            for (op, json, status, mention) in cases {
                let reply = try await tracking.callRaw(op, json: json)
                #expect(reply.status == status, "\(op) \(json) → \(reply.status) \(String(decoding: reply.json, as: UTF8.self))")
                #expect(reply.serviceError?.message.contains(mention) == true, "\(op): \(reply.serviceError?.message ?? "")")
            }
            let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(tracking.healthURL).body))
            #expect(health["details"]?["devices"] == 0, "nothing was stored")
        }
    }

    @Test func availabilitySetOnTheServerAndCommandsOnTheBusReachTheSDK() async throws {
        try await withTestBus("commands") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let configuration = tracking.sdkConfiguration()
            let device = try TrackingDevice(
                id: "commanded", configuration: configuration, provider: FixedLocation(Self.center), runtime: DeviceRuntime())
            device.isAvailable = true
            device.startTracking()
            try await eventually("the device is known") {
                (try? await tracking.call("device", DeviceParams(deviceID: "commanded"), as: DeviceInfo.self)) != nil
            }

            let info = try await tracking.call(
                "set_availability", SetAvailabilityParams(deviceID: "commanded", available: false), as: DeviceInfo.self)
            #expect(!info.available)
            // The SDK hears the platform's intents in its next acknowledgement; on a loaded machine the
            // batch in flight may be backing off, so the bound is the SDK's own longest round trip.
            try await eventually("the SDK adopts the server's newer availability", timeout: configuration.longestRoundTrip) {
                !device.isAvailable
            }

            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "notifications", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "device.command.commanded"))
            try publisher.publish(
                topic: "device.command.commanded", type: "device.command", data: DeviceCommandEvent(command: .stopTracking))
            try await eventually("the SDK stops tracking on the platform's command") { !device.isTracking }
            try publisher.publish(
                topic: "device.command.commanded", type: "device.command", data: DeviceCommandEvent(command: .startTracking))
            try await eventually("and starts again") { device.isTracking }
            try await eventually("the server sees the intent", timeout: configuration.longestRoundTrip) {
                try await tracking.call("device", DeviceParams(deviceID: "commanded"), as: DeviceInfo.self).tracking
            }
            // A stop issued before that start (the last ride's, arriving late) is ignored; a newer one is obeyed.
            let stale = DeviceCommandEvent(command: .stopTracking, issuedAt: Date().addingTimeInterval(-60))
            try publisher.publish(topic: "device.command.commanded", type: "device.command", data: stale)
            try await Task.sleep(for: .seconds(1))
            #expect(device.isTracking, "a stop older than the device's last tracking change changes nothing")
            try publisher.publish(
                topic: "device.command.commanded", type: "device.command",
                data: DeviceCommandEvent(command: .stopTracking, issuedAt: Date()))
            try await eventually("a newer stop is obeyed") { !device.isTracking }
            await publisher.close()
            await device.close()
        }
    }

    @Test func theTenLineDriverProgramStreamsAGPXTrack() async throws {
        try await withTestBus("driver-example") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let gpx = ComposeTests.root.appendingPathComponent("Tools/driver-example/drive.gpx").path
            try bus.supervisor.start(
                name: "driver", executable: "\(Binaries.directory)/driver-example", arguments: ["Ann"],
                environment: [
                    "HyperTrackPublishableKey": TestTracking.publishableKey, "HyperTrackAllowMockLocations": "true",
                    "HyperTrackDeviceID": "gpx-driver", "HyperTrackLocationGPX": gpx, "RIDE_TRACKING_INGEST": tracking.ingest,
                ])
            let start = GeoPoint(latitude: 47.8359, longitude: 35.1146)
            try await eventually("the GPX driver is found nearby") {
                try await tracking.call("nearby", NearbyQuery(location: GeoJSONPoint(start), radius: 2000), as: NearbyResult.self)
                    .devices.first?.deviceID == "gpx-driver"
            }
            let found = try await runCommand(
                Binaries.ridectl,
                [
                    "call", "tracking", "nearby",
                    #"{"location":{"type":"Point","coordinates":[35.1146,47.8359]},"radius":2000}"#,
                ] + bus.ridectlFlags)
            #expect(found.stdout.contains("\"name\" : \"Ann\""))
            let tail = try await runCommand(
                Binaries.ridectl, ["tail", "device.location.gpx-driver", "--count", "2", "--timeout", "20"] + bus.ridectlFlags)
            #expect(tail.status == 0)
            #expect(
                tail.stdout.split(separator: "\n").allSatisfy { $0.contains("device.location.gpx-driver tracking/devices/gpx-driver#") })

            let noKey = try await runCommand(
                "\(Binaries.directory)/driver-example", [], environment: ["HyperTrackPublishableKey": ""], timeout: .seconds(20))
            #expect(noKey.status != 0)
            #expect(noKey.stderr.contains("HyperTrackPublishableKey"), "\(noKey.stderr)")
        }
    }
}

/// One request/reply on the ingest socket, the way a device (or an attacker) would send it.
enum IngestProbe {
    static func exchange(endpoint: String, routingID: String?, frames: [String]) throws -> [String] {
        let socket = try Socket(.dealer)
        defer { socket.close() }
        if let routingID { try socket.setRoutingID(Frame(frame: routingID)) }
        try socket.setReceiveTimeout(milliseconds: 5000)
        try socket.connect(endpoint)
        try socket.send(message: frames.map { Frame(frame: $0) })
        guard let reply = try socket.receive() else { throw TestFailure("no reply") }
        return reply.map { String(decoding: $0, as: UTF8.self) }
    }
}
