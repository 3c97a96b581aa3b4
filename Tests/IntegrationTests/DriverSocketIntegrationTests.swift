import Foundation
import Geo
import HummingbirdWSClient
import Logging
import Synchronization
import Testing
import Wire

/// A driver's fixes over `/v1/me/live` (the web driver app's way), through the gateway and the
/// real users and tracking: each batch reaches tracking under the session's device credential and
/// is answered on the socket; a batch without the credential, with a forged one, or from a rider
/// is refused in words and stores nothing; a flood closes the connection.
@Suite(.serialized) struct DriverSocketIntegrationTests {
    static let pickup = GatewayIntegrationTests.pickup

    @Test func aDriversFixesOverTheLiveSocketAreHeldToItsDeviceCredential() async throws {
        try await withTestBus("gateway-driver-socket") { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway
            let session = try await gateway.request("POST", "/v1/sessions", #"{"phone_number":"+380671110001","password":"driving9"}"#)
            let token = try #require(session.body["token"]?.stringValue, "\(session.body)")
            let credential = try #require(
                session.body["device_credential"]?.stringValue, "a driver's session carries the device credential")

            let driver = TwoWaySocket(url: "ws://127.0.0.1:\(gateway.port)/v1/me/live?access_token=\(token)")
            defer { driver.close() }
            let north = Self.pickup.destination(bearing: 0, distance: 1000)
            let south = Self.pickup.destination(bearing: 180, distance: 2000)
            func batch(_ id: Int, at point: GeoPoint, credential: String?) -> String {
                let fix =
                    #"{"latitude":\#(point.latitude),"longitude":\#(point.longitude),"recorded_at":"\#(RFC3339.format(Date()))","accuracy":5}"#
                let proof = credential.map { #","device_credential":"\#($0)""# } ?? ""
                return #"{"batch":{"batch_id":\#(id),"locations":[\#(fix)]\#(proof)}}"#
            }
            func answer(to id: Int, on socket: TwoWaySocket) async throws -> JSONValue {
                try await eventually("the answer to batch \(id)", timeout: .seconds(15)) {
                    socket.received.contains { $0["batch_id"] == .number(Double(id)) }
                }
                return try #require(socket.received.first { $0["batch_id"] == .number(Double(id)) })
            }
            @Sendable func nearestCar() async throws -> JSONValue? {
                let seen = try await gateway.request(
                    "GET", "/v1/drivers/nearby?latitude=\(Self.pickup.latitude)&longitude=\(Self.pickup.longitude)&radius=5000",
                    token: apps.rider.token)
                return seen.body["cars"]?.arrayValue?.first
            }

            try await eventually("the socket is open", timeout: .seconds(10)) { driver.isOpen }
            driver.send(batch(10, at: north, credential: credential))
            let ack = try await answer(to: 10, on: driver)
            #expect(ack["type"] == "ack" && ack["ack"] != nil, "\(ack)")
            try await eventually("the rider sees Dan's car where the socket put it") {
                try await nearestCar()?["latitude"]?.numberValue.map { abs($0 - north.latitude) < 1e-6 } == true
            }

            // Refused, in words, the socket open, nothing stored: no credential, a forged one.
            driver.send(batch(11, at: south, credential: nil))
            let bare = try await answer(to: 11, on: driver)
            #expect(bare["type"] == "error" && bare["status"] == 401 && bare["error"]?["code"] == "credential_required", "\(bare)")
            var forged = Array(credential)
            forged[forged.count - 2] = forged[forged.count - 2] == "A" ? "B" : "A"
            driver.send(batch(12, at: south, credential: String(forged)))
            let refused = try await answer(to: 12, on: driver)
            #expect(
                refused["type"] == "error" && refused["status"] == 401 && refused["error"]?["code"] == "credential_invalid", "\(refused)")
            driver.send(#"{"batch":[1,2]}"#)
            try await eventually("a batch that is not an object is a 422") {
                driver.received.contains { $0["status"] == 422 && $0["error"]?["message"]?.stringValue?.hasPrefix("batch:") == true }
            }
            driver.send(batch(13, at: north.destination(bearing: 90, distance: 20), credential: credential))
            #expect(try await answer(to: 13, on: driver)["type"] == "ack", "the socket stays open after refusals")
            #expect(
                try await nearestCar()?["latitude"]?.numberValue.map { abs($0 - south.latitude) < 1e-3 } != true,
                "no refused fix was stored")

            // The driver's own device as tracking has it (the app after a reload); a rider has none.
            let device = try await gateway.request("GET", "/v1/me/device", token: token)
            #expect(
                device.status == 200 && device.body["available"] == true && device.body["device_id"] == "gw-dan-phone", "\(device.body)")
            let ridersDevice = try await gateway.request("GET", "/v1/me/device", token: apps.rider.token)
            #expect(ridersDevice.status == 403 && ridersDevice.body["error"]?["code"] == "drivers_only", "\(ridersDevice.body)")

            // A rider's batch is refused at the gateway.
            let rider = TwoWaySocket(url: "ws://127.0.0.1:\(gateway.port)/v1/me/live?access_token=\(apps.rider.token)")
            defer { rider.close() }
            try await eventually("the rider's socket is open", timeout: .seconds(10)) { rider.isOpen }
            rider.send(batch(20, at: north, credential: credential))
            let ridersBatch = try await answer(to: 20, on: rider)
            #expect(ridersBatch["status"] == 403 && ridersBatch["error"]?["code"] == "drivers_only", "\(ridersBatch)")

            // A flood of batches meets the connection's budget: an error (429), then close 4429.
            for _ in 0..<300 { driver.send(#"{"batch":{}}"#) }
            try await eventually("the flooding connection is closed", timeout: .seconds(20)) { driver.ending != nil }
            #expect(
                driver.received.last?["status"] == 429 && driver.received.last?["error"]?["code"] == "too_many_messages",
                "\(driver.received.suffix(2))")
            #expect(driver.ending?.contains("4429") == true, "\(driver.ending ?? "")")
        }
    }
}

/// A WebSocket client that sends what it is given and keeps every JSON message it receives.
final class TwoWaySocket: Sendable {
    private let log = LiveClient.Log()
    /// Set once the connection is open (a class: a Mutex cannot be captured before init ends).
    private final class Opened: Sendable { let value = Mutex(false) }
    private let opened = Opened()
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    init(url: String) {
        let (stream, outgoing) = AsyncStream<String>.makeStream()
        self.outgoing = outgoing
        let (log, opened) = (log, opened)
        task = Task {
            do {
                let close = try await WebSocketClient.connect(url: url, logger: Logger(label: "two-way-socket")) { inbound, outbound, _ in
                    opened.value.withLock { $0 = true }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { for await text in stream { try await outbound.write(.text(text)) } }
                        group.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                guard case .text(let text) = message,
                                    let value = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
                                else { continue }
                                log.messages.withLock { $0.append(value) }
                            }
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
                log.ending.withLock { $0 = "closed: \(String(describing: close))" }
            } catch {
                log.ending.withLock { $0 = "failed: \(error)" }
            }
        }
    }

    func send(_ text: String) { outgoing.yield(text) }
    var received: [JSONValue] { log.messages.withLock { $0 } }
    var isOpen: Bool { opened.value.withLock { $0 } }
    /// How the connection ended, nil while it is open.
    var ending: String? { log.ending.withLock { $0 } }

    func close() {
        outgoing.finish()
        task.cancel()
    }
}
