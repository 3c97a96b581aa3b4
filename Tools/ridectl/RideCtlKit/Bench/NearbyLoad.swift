import ArgumentParser
import Bus
import Foundation
import Geo
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Synchronization
import Wire
import ZeroMQ

/// Puts drivers in the index through `tracking.ingest` (one location each, 80% available).
enum DriverLoad {
    static func load(drivers: Int, first: Int = 0, broker: String) async throws {
        var options = MDPClient.Options()
        options.timeout = .seconds(30)
        let client = try await ServiceClient(broker: broker, options: options, logger: CLILogging.logger)
        let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)
        let now = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var started = 0
            func launch() {
                let index = first + started
                started += 1
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    let point = origin.destination(
                        bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 0...10_000, using: &generator))
                    let batch = IngestBatch(
                        publishableKey: "pk_dev_ridesharing", deviceID: "driver-\(index)", batchID: 1,
                        device: DeviceIntents(name: "Driver \(index)", tracking: true, available: index % 5 != 0, changedAt: now),
                        locations: [DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: now, accuracy: 5)])
                    let reply = try await client.callRaw(Ops.Tracking.ingest, json: JSONCoding.encode(batch))
                    if reply.status != 200 {
                        throw ConfigurationError("ingest failed: \(reply.status) \(String(decoding: reply.json, as: UTF8.self))")
                    }
                }
            }
            for _ in 0..<min(512, drivers) { launch() }
            while try await group.next() != nil {
                if started < drivers { launch() }
            }
        }
        await client.close()
    }
}

/// Nearby queries from one client with `inflight` outstanding.
enum NearbyLoad {
    static func run(broker: String, seconds: Double, inflight: Int, radius: Double) async throws -> (Percentiles, Int, Double) {
        var options = MDPClient.Options()
        options.timeout = .seconds(10)
        let client = try await ServiceClient(broker: broker, options: options, logger: CLILogging.logger)
        let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let start = ContinuousClock.now
        let all = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<inflight {
                group.addTask {
                    var local: [Double] = []
                    var generator = SystemRandomNumberGenerator()
                    while ContinuousClock.now < deadline {
                        let center = origin.destination(
                            bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 0...9000, using: &generator)
                        )
                        let query = NearbyQuery(location: GeoJSONPoint(center), radius: radius, limit: 10, availableOnly: true)
                        let params = try JSONCoding.encode(query)
                        let began = MonotonicClock.nanoseconds()
                        let reply = try await client.callRaw(Ops.Tracking.nearby, json: params)
                        local.append(Double(MonotonicClock.nanoseconds() - began) / 1000)
                        if reply.status != 200 { throw ConfigurationError("nearby failed: \(reply.status)") }
                    }
                    return local
                }
            }
            return try await group.reduce(into: [Double]()) { $0.append(contentsOf: $1) }
        }
        let elapsed = Double((ContinuousClock.now - start).milliseconds) / 1000
        await client.close()
        return (Percentiles(all), all.count, elapsed)
    }
}
