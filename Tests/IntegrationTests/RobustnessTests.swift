import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire
import ZeroMQ

/// Bad input on every bus socket leaves the bus serving.
@Suite(.timeLimit(.minutes(2))) struct RobustnessTests {
    @Test func garbageOnEverySocketLeavesTheBusServing() async throws {
        try await withTestBus("garbage") { bus in
            try bus.startEchoWorker("worker")
            try await bus.waitForWorkers("echo")
            let ports = [bus.pubPort, bus.subPort, bus.brokerPort, bus.httpPort]
            let brokerEndpoint = bus.broker
            let ingress = bus.ingress
            let egress = bus.egress
            let abuse = OwnedThread(name: "abuse") {
                var generator = SystemRandomNumberGenerator()
                // 1. Random bytes on raw TCP to every port (ZMTP handshakes fail, HTTP gets junk).
                for port in ports {
                    for size in [1, 7, 64, 4096] {
                        RawTCP.send(port: port, bytes: (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
                    }
                    // A ZMTP greeting that claims a socket type that is not allowed here.
                    RawTCP.send(
                        port: port,
                        bytes: [0xFF] + [UInt8](repeating: 0, count: 8) + [0x01, 0x7F, 0x03, 0x00] + Array("NULL".utf8)
                            + [UInt8](repeating: 0, count: 16) + [0x00]
                            + [UInt8](repeating: 0, count: 31))
                }
                // 2. Truncated MDP messages and wrong headers to the broker.
                guard let dealer = try? Socket(.dealer), (try? dealer.connect(brokerEndpoint)) != nil else { return }
                let bad: [[Frame]] =
                    [
                        [[]], [Frame(frame: "MDPC01")], [[], Frame(frame: "MDPC01")], [[], Frame(frame: "MDPC01"), []],
                        [[], Frame(frame: "MDPX99"), Frame(frame: "echo")], [[], Frame(frame: "MDPW01")],
                        [[], Frame(frame: "MDPW01"), [0x42]],
                        [[], Frame(frame: "MDPW01"), [0x03], [1, 2, 3]], [[], Frame(frame: "MDPW01"), [0x01]],
                        [[], Frame(frame: "MDPW01"), [0x04]],
                        [[], Frame(frame: "MDPW01"), [0x02], [9], []], [[0xFF, 0xFE]], [[], Frame(frame: "MDPC01"), [0xC3, 0x28]],
                    ]
                    + (0..<200).map { _ in
                        (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                            (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        }
                    }
                for message in bad { _ = try? dealer.send(message: message) }
                // 3. Random frames from a publisher (forwarded as-is; subscribers reject them).
                if let pub = try? Socket(.pub), (try? pub.connect(ingress)) != nil {
                    for _ in 0..<100 { _ = try? pub.send(message: [Frame(frame: "junk"), [0x00, 0xFF]]) }
                    pub.close()
                }
                // 4. Random messages upstream from the subscriber side (not subscriptions).
                if let xsub = try? Socket(.xsub), (try? xsub.connect(egress)) != nil {
                    for _ in 0..<100 { _ = try? xsub.send(message: [[0x07, 0x01], [0x02]]) }
                    usleep(100_000)
                    xsub.close()
                }
                usleep(200_000)
                dealer.close()
            }
            await abuse.join()

            // Still serving: health, requests, events.
            #expect(try await HTTPProbe.get(bus.healthURL).status == 200)
            let client = try await bus.client()
            let ping = try await client.call("echo", "ping", NoParams(), as: PingReply.self)
            #expect(ping.service == "echo")
            await client.close()
            let subscriber = try await EventSubscriber<JSONValue>(endpoint: bus.egress, prefixes: ["after."], logger: testLogger)
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "after", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "after.x"))
            try publisher.publish(topic: "after.x", type: "t", data: ["ok": true] as JSONValue)
            var iterator = subscriber.deliveries.makeAsyncIterator()
            let batch = await iterator.next()
            if case .event(let event)? = batch?.first {
                #expect(event.event.data["ok"] == true)
            } else {
                Issue.record("no event after the abuse")
            }
            await publisher.close()
            await subscriber.close()
            #expect(try await bus.waitForMetric("ride_bus_rejected_messages_total{socket=\"broker\"}", atLeast: 10) >= 10)
            #expect(try await bus.waitForMetric("ride_bus_rejected_messages_total{socket=\"egress\"}", atLeast: 1) >= 1)
            #expect(bus.supervisor.isRunning("bus"))
            #expect(bus.log.contains("rejected message"), "bad input is logged")
        }
    }
}

/// Raw TCP, for bytes that are not ZeroMQ at all.
enum RawTCP {
    static func send(port: Int, bytes: [UInt8]) {
        guard let fd = connect(port: port) else { return }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        usleep(20_000)
    }

    /// A socket connected to 127.0.0.1:`port` (the caller closes it), or nil.
    static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
