import Bus
import Foundation
import Testing
import Wire

/// What one account's sockets may cost the gateway, through real processes (issue 38): a user holds
/// at most `--sockets-per-user` open (one more is refused 429, closed 4429); a socket that sends
/// nothing for `--socket-idle-s` is closed (4408); a resume (`?after=`) older than the last 1 000
/// events starts with a snapshot instead of reading the history.
@Suite(.serialized) struct SocketLimitsIntegrationTests {
    typealias Apps = GatewayIntegrationTests.Apps

    @Test func aUsersSocketsAreCappedAndQuietOnesClosed() async throws {
        try await withTestBus("socket-limits") { bus in
            let apps = try await Apps.start(bus, gateway: ["--sockets-per-user", "2", "--socket-idle-s", "6"])
            let url = "ws://127.0.0.1:\(apps.gateway.port)/v1/me/live?access_token=\(apps.rider.token)"
            // Three at once: whichever upgrade comes last (under load, not always the third opened) is refused.
            let sockets = (0..<3).map { _ in LiveClient(url: url) }
            defer { sockets.forEach { $0.close() } }
            try await eventually("one of three sockets is refused", timeout: .seconds(20)) { sockets.contains { $0.ending != "open" } }
            let refused = sockets.filter { $0.ending != "open" }
            #expect(refused.count == 1, "\(sockets.map(\.ending))")
            #expect(
                refused.first?.received.last?["error"]?["code"] == "too_many_sockets" && refused.first?.ending.contains("4429") == true,
                "\(refused.map(\.received))")
            let held = sockets.filter { $0.ending == "open" }
            try #require(held.count == 2, "\(sockets.map(\.ending))")
            let (first, second) = (held[0], held[1])
            // Another user is not counted with the rider.
            let drivers = LiveClient(url: "ws://127.0.0.1:\(apps.gateway.port)/v1/me/live?access_token=\(apps.driver.token)")
            defer { drivers.close() }

            // Nothing to send for 6 s: both quiet sockets are closed, saying why; their slots are free again.
            try await eventually("the quiet sockets are closed", timeout: .seconds(20)) {
                first.ending != "open" && second.ending != "open"
            }
            #expect(first.received.last?["error"]?["code"] == "idle" && first.ending.contains("4408"), "\(first.received); \(first.ending)")
            let again = LiveClient(url: url)
            defer { again.close() }
            try await Task.sleep(for: .seconds(1))
            #expect(again.ending == "open" && again.received.isEmpty, "\(again.ending) \(again.received)")
        }
    }

    @Test func aResumeFromLongAgoGetsASnapshotNotTheHistory() async throws {
        try await withTestBus("socket-replay") { bus in
            let apps = try await Apps.start(bus)
            let id = try await apps.bookAndAccept()
            // Over 1 000 events of orders since: chat messages, through the bus (not the gateway's limits).
            let client = try await bus.client(timeout: .seconds(5))
            defer { Task { await client.close() } }
            for number in 0..<1010 {
                let json = #"{"caller":{"role":"rider","id":"\#(apps.rider.id)"},"id":"\#(id)","text":"message \#(number)"}"#
                #expect(try await client.callRaw("orders", "send_message", json: Array(json.utf8)).status == 201)
            }
            let fromTheStart = apps.live(id, token: apps.rider.token, after: 0)
            defer { fromTheStart.close() }
            try await eventually("the resume answered") { !fromTheStart.received.isEmpty }
            try await Task.sleep(for: .milliseconds(500))
            #expect(
                fromTheStart.received.first?["type"] == "snapshot",
                "a snapshot, not 1 000 replayed events: \(fromTheStart.received.prefix(3))")
            #expect(fromTheStart.received.count < 10, "\(fromTheStart.received.count) messages")
            // A recent resume replays what was missed.
            let last = try #require(fromTheStart.received.first?["sequence"]?.numberValue.map(UInt64.init))
            let recent = apps.live(id, token: apps.rider.token, after: last - 5)
            defer { recent.close() }
            try await eventually("the recent resume replayed") { recent.received.count >= 5 }
            #expect(recent.received.allSatisfy { $0["type"] == "chat" }, "\(recent.received.prefix(3))")
        }
    }
}
