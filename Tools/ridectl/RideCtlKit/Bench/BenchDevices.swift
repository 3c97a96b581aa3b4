import ArgumentParser
import Bus
import Foundation
import Geo
import RideModels
import ServiceKit
import Wire
import ZeroMQ

/// `ridectl bench-devices`: many devices on the ingest socket, as a load for the tracking
/// benchmarks. Each device has its own DEALER (a random routing id; batches name the device), drives a random walk in a
/// city box and sends one batch a second with unique timestamps; acknowledgements are counted.
/// The JSON is written by hand so that the generator costs little next to what it measures.
/// With `--redis`, the same fixes go to Redis instead, as the peer's load: one `GEOADD drivers`
/// per batch (a longitude, latitude and member per fix), pipelined on a few connections.
/// Hidden: `ridectl bench ingest` and `bench nearby` start it (several, for the descriptor limit).
struct BenchDevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-devices", abstract: "Simulate devices streaming to ride-tracking (benchmark load).", shouldDisplay: false)

    @Option(help: "Tracking's ingest endpoint.") var ingest: String
    @Option(help: "Devices in this process.") var devices: Int
    @Option(help: "Number of the first device (ids are bench-<n>).") var first = 0
    @Option(help: "Locations per second, all devices together.") var rate: Int
    @Option(help: "Seconds to run.") var seconds: Double
    @Option(help: "Publishable key.") var key = "pk_dev_ridesharing"
    @Option(help: "Centre of the city box, lat,lon.") var center = "47.8359,35.1146"
    @Option(help: "Size of the city box in km.") var boxKilometres = 20.0
    @Option(help: "Nice value for this process (the simulated phones are not on the measured machine in real life).") var nice: Int32 = 0
    @Option(help: "HOST:PORT of a Redis to send the same fixes to as GEOADDs, instead of the ingest.") var redis: String?
    @Option(help: "Connections to Redis (--redis), the devices spread over them.") var redisConnections = 4

    func validate() throws {
        if let redis, RedisLoad.hostAndPort(redis) == nil {
            throw ValidationError("--redis must be HOST:PORT (a port from 1 to 65535), not '\(redis.prefix(60))'")
        }
        guard redisConnections > 0 else { throw ValidationError("--redis-connections must be at least 1") }
    }

    func run() throws {
        if nice != 0 { Self.renice(nice) }
        let parts = center.split(separator: ",").compactMap { Double($0) }
        guard parts.count == 2, devices > 0, rate > 0 else { throw ValidationError("bad --center, --devices or --rate") }
        let origin = GeoPoint(latitude: parts[0], longitude: parts[1])
        let perBatch = max(1, rate / devices)
        var generator = SystemRandomNumberGenerator()
        var sockets: [Socket] = []
        var positions: [GeoPoint] = []
        var headings: [Double] = []
        let poller = ReadinessPoller()
        let peer = try redis.map { try RedisLoad(address: $0, connections: redisConnections) }
        for index in 0..<devices {
            if peer == nil {
                let socket = try Socket(.dealer)
                // A random routing id, as the SDK's: the batch names the device (`device_id`).
                try socket.setRoutingID((0..<16).map { $0 == 0 ? UInt8.random(in: 1...255) : UInt8.random(in: 0...255) })
                try socket.setSendHighWaterMark(0)
                try socket.connect(ingest)
                try poller.add(socket, token: index)
                sockets.append(socket)
            }
            let half = boxKilometres * 500
            positions.append(
                origin.destination(bearing: 0, distance: Double.random(in: -half...half, using: &generator))
                    .destination(bearing: 90, distance: Double.random(in: -half...half, using: &generator)))
            headings.append(Double.random(in: 0..<360, using: &generator))
        }
        var batchIDs = [UInt64](repeating: 1, count: devices)
        var sent: UInt64 = 0
        var acked: UInt64 = 0
        var errors: UInt64 = 0
        let start = Date()
        var nextSecond = 0
        let end = start.addingTimeInterval(seconds)
        // Device i sends at i/devices into each second, so the load is even.
        while Date() < end {
            let elapsed = Date().timeIntervalSince(start)
            let due = min(devices * (Int(elapsed) + 1), Int(elapsed * Double(devices)))
            while nextSecond < due {
                let index = nextSecond % devices
                nextSecond += 1
                let now = Date()
                // A straight segment per batch (one bit of trigonometry, not one per fix).
                let step = positions[index].destination(bearing: headings[index], distance: 10.0 / Double(perBatch))
                let (dLat, dLon) = (step.latitude - positions[index].latitude, step.longitude - positions[index].longitude)
                if Int.random(in: 0..<10, using: &generator) == 0 { headings[index] = Double.random(in: 0..<360, using: &generator) }
                if let peer {
                    var fixes: [GeoPoint] = []
                    for _ in 0..<perBatch {
                        positions[index] = GeoPoint(
                            latitude: positions[index].latitude + dLat, longitude: positions[index].longitude + dLon)
                        fixes.append(positions[index])
                    }
                    peer.add(device: first + index, fixes: fixes)
                    sent += UInt64(perBatch)
                    continue
                }
                var json: [UInt8] = []
                json.reserveCapacity(64 + perBatch * 130)
                json += Array(#"{"publishable_key":"\#(key)","device_id":"bench-\#(first + index)","batch_id":\#(batchIDs[index]),"#.utf8)
                if batchIDs[index] == 1 { json += Array(#""device":{"tracking":true,"available":true},"#.utf8) }
                json += Array(#""locations":["#.utf8)
                for j in 0..<perBatch {
                    positions[index] = GeoPoint(latitude: positions[index].latitude + dLat, longitude: positions[index].longitude + dLon)
                    let time = now.addingTimeInterval(-Double(perBatch - 1 - j) / Double(perBatch))
                    let p = positions[index]
                    json += Array((j == 0 ? #"{"latitude":"# : #",{"latitude":"#).utf8)
                    FixedDecimal.append(p.latitude, to: &json)
                    json += Array(#","longitude":"#.utf8)
                    FixedDecimal.append(p.longitude, to: &json)
                    json += Array(#","recorded_at":""#.utf8)
                    RFC3339.append(time, to: &json)
                    json += Array(#"","accuracy":5,"speed":10,"bearing":"#.utf8)
                    FixedDecimal.append(headings[index], to: &json)
                    json.append(UInt8(ascii: "}"))
                }
                json += Array("]}".utf8)
                batchIDs[index] += 1
                if (try? sockets[index].send(message: [Frame(frame: IngestFrame.batch), json], dontWait: true)) == true {
                    sent += UInt64(perBatch)
                }
            }
            if let peer {
                acked += try peer.exchange()
                continue
            }
            for token in poller.wait(timeoutMilliseconds: 2) {
                while let reply = try? sockets[token].receive(dontWait: true) {
                    if reply.first == Frame(frame: IngestFrame.ack) { acked += 1 } else { errors += 1 }
                }
            }
        }
        if let peer {
            acked += try peer.drain()
            errors = UInt64(peer.errors)
        }
        print(#"{"sent":\#(sent),"acked_batches":\#(acked),"errors":\#(errors)}"#)
        for socket in sockets { socket.close() }
    }

    /// Linux keeps a nice value per thread: set it on every thread there is (threads started
    /// later, such as libzmq's, inherit their creator's).
    private static func renice(_ value: Int32) {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? ["0"]
        for thread in threads.compactMap({ id_t($0) }) {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, value)
        }
    }
}

/// Six decimals, written with integer arithmetic (the generator must cost little).
enum FixedDecimal {
    static func append(_ value: Double, to out: inout [UInt8]) {
        var scaled = Int64((value * 1_000_000).rounded())
        if scaled < 0 {
            out.append(UInt8(ascii: "-"))
            scaled = -scaled
        }
        out += Array(String(scaled / 1_000_000).utf8)
        out.append(UInt8(ascii: "."))
        let fraction = scaled % 1_000_000
        var digits = [UInt8](repeating: 48, count: 6)
        var rest = fraction
        for i in stride(from: 5, through: 0, by: -1) {
            digits[i] = UInt8(48 + rest % 10)
            rest /= 10
        }
        out += digits
    }
}
