import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// The attack suite: an outsider on the platform's network — with no key, with a key the platform
/// never heard of, with a key stolen from the gateway or from a service — tries each attack of
/// docs/security.md against `ridectl up --secure` while a simulation's rides are in flight, using
/// pyzmq and nothing of ours (interop/attacker.py). Each attempt must be refused with nothing
/// stored, charged or suppressed, and every ride must still complete and be paid its own fare — a
/// forged far-ahead sequence, for one, would otherwise have stopped every reactor.
@Suite(.timeLimit(.minutes(15)), .serialized) struct AttackTests {
    /// Ports shifted into 12555–16106: clear of the other suites that run `up` (8 000–10 500) and of
    /// the free-port range (20000–32767).
    static let offset = 7_000
    var ingress: String { "tcp://127.0.0.1:\(5555 + Self.offset)" }
    var egress: String { "tcp://127.0.0.1:\(5556 + Self.offset)" }
    var broker: String { "tcp://127.0.0.1:\(5557 + Self.offset)" }
    var ingest: String { "tcp://127.0.0.1:\(5558 + Self.offset)" }
    var busHealth: String { "http://127.0.0.1:\(9100 + Self.offset)/health" }

    /// Runs one attack; its JSON answer.
    func attack(_ arguments: [String], as thief: [String: String]) async throws -> JSONValue {
        let script = URL(fileURLWithPath: Binaries.interopScript).deletingLastPathComponent().appendingPathComponent("attacker.py").path
        let run = try await runCommand("/usr/bin/env", ["python3", "-u", script] + arguments, environment: thief, timeout: .seconds(120))
        guard run.status == 0, let answer = try? JSONCoding.decode(JSONValue.self, from: Array(run.stdout.utf8)) else {
            throw TestFailure("attacker.py \(arguments.joined(separator: " ")) failed (\(run.status)): \(run.stderr.suffix(1500))")
        }
        return answer
    }

    @Test func anOutsiderIsRefusedEveryAttackAndTheRidesInFlightCompleteAndArePaidTheirOwnFares() async throws {
        let check = try await runCommand("/usr/bin/env", ["python3", "-c", "import zmq"], timeout: .seconds(180))
        guard check.status == 0 else {
            throw TestFailure(
                "pyzmq is missing: `make test-deps` installs it in .build/python, which make puts first on PATH (docs/contributing.md)")
        }
        let scratch = try makeScratchDirectory("attacks")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        defer { supervisor.killAll() }
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: [
                "up", "--secure", "--port-offset", "\(Self.offset)", "--data-dir", "\(scratch)/data", "--bin-dir", Binaries.directory,
            ],
            environment: ["RIDE_PASSWORD_ROUNDS": "2000"])  // the simulation signs its people up and in at the gateway
        try await UpTests.waitForBanner(supervisor)
        let keys = "\(scratch)/data/keys"
        let serverKey = try CurveKeyDirectory.readKey("\(keys)/server.pub", what: "server key")
        let key = { (name: String) in try CurveKeyDirectory.readKey("\(keys)/clients/\(name).key", what: "\(name)'s key") }
        let plain: [String: String] = [:]
        let stranger = ["ATTACK_SERVER_KEY": serverKey]  // a fresh pair the platform never heard of
        let gateway = ["ATTACK_SERVER_KEY": serverKey, "ATTACK_SECRET_KEY": try key("gateway")]
        let operatorKeys = ["RIDE_CURVE_KEYS": keys]

        // Rides in flight the whole time, from outside too: apps through the gateway and phones on
        // the device ingest, holding no key of the bus (`simulate --gateway`).
        let simulation = Task {
            try await runCommand(
                Binaries.ridectl,
                [
                    "simulate", "--drivers", "4", "--riders", "4", "--duration", "50", "--grace", "200", "--speedup", "6", "--box-km", "1",
                    "--ingest", ingest, "--share-links", "", "--gateway", "http://127.0.0.1:\(8080 + Self.offset)",
                    "--ingest-server-key-file", "\(keys)/server.pub",
                ], environment: plain, timeout: .seconds(320))
        }
        // One of them, as the operator sees it: the order, its rider, its driver's device.
        let tail = try await runCommand(
            Binaries.ridectl, ["tail", "order.status.PICKING_UP", "--json", "--count", "1", "--timeout", "120", "--sub", egress],
            environment: operatorKeys,
            timeout: .seconds(150))
        let event = try JSONCoding.decode(
            JSONValue.self, from: Array(tail.stdout.split(separator: "\n").first.map(String.init)?.utf8 ?? "".utf8))
        let order = try #require(event["data"]?["order"])
        let orderID = try #require(order["id"]?.stringValue)
        let riderID = try #require(order["rider"]?["id"]?.stringValue)
        let deviceID = try #require(order["driver"]?["device_id"]?.stringValue)
        let usersWorkers = try await workerCount("users", busHealthURL: busHealth)

        // Eavesdropping: no key, a stranger's key — never connected; the gateway's key — connected,
        // but its subscription to everything is refused, so it hears nothing while rides flow.
        for thief in [plain, stranger] {
            let heard = try await attack(["eavesdrop", egress, "", "4"], as: thief)
            #expect(heard["welcomed"] == false && heard["received"] == 0, "\(heard)")
        }
        let gatewayHears = try await attack(["eavesdrop", egress, "", "6"], as: gateway)
        #expect(gatewayHears["welcomed"] == true && gatewayHears["received"] == 0, "\(gatewayHears)")
        let usersTopics = try await attack(["eavesdrop", egress, "user.", "3"], as: gateway)
        #expect(usersTopics["received"] == 0, "\(usersTopics)")

        // Privileged ops: unanswered without a key the bus knows; 403 with the reason for the gateway's,
        // asked in 7/MDP's frames or packed into one as the platform's own clients ask.
        let privileged: [(String, String, String)] = [
            ("users", "issue_device_credential", #"{"id":"\#(order["driver"]?["id"]?.stringValue ?? "")"}"#),
            ("notifications", "register_webhook", #"{"url":"http://169.254.169.254/latest/meta-data"}"#),
            ("notifications", "list_webhooks", "{}"),
            ("users", "verify_device_credential", #"{"device_id":"\#(deviceID)","credential":"x"}"#),
        ]
        for (service, op, params) in privileged {
            for thief in [plain, stranger] {
                let answer = try await attack(["call", broker, service, op, params], as: thief)
                #expect(answer["answered"] == false, "\(service).\(op): \(answer)")
            }
            for call in ["call", "call-packed"] {
                let answer = try await attack([call, broker, service, op, params], as: gateway)
                #expect(
                    answer["status"] == "403" && answer["body"]?.stringValue?.contains("may not call \(service).\(op)") == true,
                    "\(call) \(service).\(op): \(answer)")
            }
        }

        // On this machine, the broker's Unix socket: frames there are not sealed, each connection
        // proves its key once. No key, a stranger's CURVE handshake, or the gateway's key named with
        // a guessed proof: never connected, so the privileged op goes unanswered.
        let localBroker = "ipc://\(scratch)/data/broker.sock"
        #expect(FileManager.default.fileExists(atPath: "\(scratch)/data/broker.sock"), "the platform's processes call over ipc://")
        let gatewayPublic = try CurveKeyDirectory.readKey("\(keys)/clients/gateway.pub", what: "gateway's public key")
        let guessed = ["ATTACK_PLAIN_USER": gatewayPublic, "ATTACK_PLAIN_PASSWORD": String(repeating: "0", count: 40)]
        for thief in [plain, stranger, guessed] {
            let answer = try await attack(["call", localBroker, "notifications", "list_webhooks", "{}"], as: thief)
            #expect(answer["answered"] == false, "over ipc:// as \(thief.keys.sorted()): \(answer)")
        }

        // A fake users worker (it would see log-ins with passwords): the gateway's key is told to
        // disconnect and never gets a request; a stranger never connects.
        for serve in ["serve", "serve-packed"] {
            let fakeWorker = try await attack([serve, broker, "users", "4"], as: gateway)
            #expect(fakeWorker["disconnected"] == true && fakeWorker["requests"] == 0, "\(serve): \(fakeWorker)")
        }
        let strangerWorker = try await attack(["serve", broker, "users", "3"], as: stranger)
        #expect(strangerWorker["commands"] == [], "\(strangerWorker)")
        #expect(try await workerCount("users", busHealthURL: busHealth) == usersWorkers)

        // Forged events with the gateway's key: the forwarder drops them, so nobody hears them and
        // the order is not charged the forged amount.
        // The real order, completed, with another rider and a fare of 10 000 EUR: a payload any subscriber decodes.
        guard case .object(var forgedOrder) = order, case .object(var rider)? = order["rider"] else {
            throw TestFailure("the order is not an object: \(order)")
        }
        rider["id"] = "attacker"
        forgedOrder["rider"] = .object(rider)
        forgedOrder["status"] = "COMPLETED"
        forgedOrder["fare"] = ["currency": "EUR", "total_cents": 1_000_000, "distance_m": 1000, "duration_s": 60]
        let forgedData = String(
            decoding: try JSONCoding.encode(JSONValue.object(["previous_status": "DROPPING_OFF", "order": .object(forgedOrder)])),
            as: UTF8.self)
        // The witness is the operator, who may hear every event. What it surely hears is a rider
        // signing up while it listens (the simulation's rides may all have ended by now).
        let witnessKeys = ["ATTACK_SERVER_KEY": serverKey, "ATTACK_SECRET_KEY": try key("operator")]
        let witness = Task { try await attack(["eavesdrop", egress, "", "15"], as: witnessKeys) }
        try await Task.sleep(for: .seconds(3))
        let apps = TestGateway(port: 8080 + Self.offset, statusPort: 0, retriesUnavailable: true)
        _ = try await apps.signUp(
            #"{"role":"rider","name":"Witnessed","phone_number":"+380501117777","password":"secret123"}"#, phone: "+380501117777",
            password: "secret123")
        let forged = try await attack(
            ["publish", ingress, "order.status.COMPLETED", "orders", "999999", "order.status", forgedData], as: gateway)
        let forgedMessage = try await attack(
            [
                "publish", ingress, "order.message.\(orderID)", "orders", "999998", "order.message",
                #"{"order_id":"\#(orderID)","text":"pay me"}"#,
            ], as: gateway)
        // The same forgery in one frame, as ride-bus asks its own publishers for events (a batch):
        // the forwarder checks each event of a batch as it checks a message of its own.
        func publishesRefused() async throws -> Double {
            let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealth).text.utf8))
            return health["details"]?["denied"]?["publish gateway"]?.numberValue ?? 0
        }
        let refusedBefore = try await publishesRefused()
        let forgedBatch = try await attack(
            ["publish-batch", ingress, "order.status.COMPLETED", "orders", "999997", "order.status", forgedData], as: gateway)
        #expect(try await publishesRefused() > refusedBefore, "the bus refused the batch's event")
        let heard = try await witness.value
        #expect(
            heard["welcomed"] == true && heard["topics"]?.arrayValue?.contains("user.registered") == true,
            "the witness heard the real sign-up: \(heard)")
        for id in [forged["id"], forgedMessage["id"], forgedBatch["id"]].compactMap({ $0 }) {
            #expect(heard["ids"]?.arrayValue?.contains(id) == false, "a forged event reached a subscriber")
        }

        // With the orders key itself stolen, the forwarder lets order events through; the subscribers
        // then refuse what the publisher's own log does not have: a sequence far ahead of it (which
        // would stall every reactor), a forged sequence 1 (which would make them read the whole log
        // again), and an order event claiming another source. Orders charges nothing from a payload.
        let ordersKey = ["ATTACK_SERVER_KEY": serverKey, "ATTACK_SECRET_KEY": try key("orders")]
        for (sequence, source) in [("\(UInt64(1) << 62)", "orders"), ("1", "orders"), ("5", "trips")] {
            _ = try await attack(
                ["publish", ingress, "order.status.COMPLETED", source, sequence, "order.status", forgedData], as: ordersKey)
        }
        var refusedByOrders: [Substring] = []
        for _ in 0..<30 {
            let metrics = try await HTTPProbe.get("http://127.0.0.1:\(9102 + Self.offset)/metrics").text
            refusedByOrders = metrics.split(separator: "\n").filter { $0.hasPrefix("ride_events_refused_total{") && !$0.hasSuffix(" 0") }
            if ["far_ahead", "restart", "source"].allSatisfy({ reason in refusedByOrders.contains { $0.contains("\"\(reason)\"") } }) {
                break
            }
            try await Task.sleep(for: .seconds(1))
        }
        for reason in ["far_ahead", "restart", "source"] {
            #expect(refusedByOrders.contains { $0.contains("\"\(reason)\"") }, "orders refused \(reason): \(refusedByOrders)")
        }

        // The device ingest admits any key (phones bring their own), so the attacker reaches it —
        // with the driver's device id as its routing id, batches for that device without its
        // credential: refused, no ack, none of the device's commands; a flood of unknown devices
        // and an oversized message are refused too; the driver streams on (its ride completes).
        let hijack = try await attack(["hijack", ingest, deviceID, "4"], as: stranger)
        #expect(hijack["ack"] == 0 && hijack["command"] == 0 && (hijack["error"]?.numberValue ?? 0) > 0, "\(hijack)")
        let flood = try await attack(["flood", ingest, "300"], as: stranger)
        #expect(flood["ack"] == 0 && (flood["error"]?.numberValue ?? 0) > 0, "\(flood)")
        let oversize = try await attack(["oversize", ingest, "\(4 << 20)"], as: stranger)
        #expect(oversize["ack"] == 0, "\(oversize)")

        // The bus counted each kind of refusal.
        let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealth).text.utf8))
        let denied = health["details"]?["denied"]
        for action in ["call gateway", "serve gateway", "publish gateway", "subscribe gateway"] {
            #expect((denied?[action]?.numberValue ?? 0) > 0, "\(action): \(String(describing: denied))")
        }

        // Every ride completes and is paid; the attacked one its own fare, by its own rider.
        let report = try await simulation.value
        #expect(report.status == 0, "\(report.stdout)\n\(report.stderr.suffix(2000))")
        let summary = SimulationReport(text: report.stdout)
        #expect(summary.met("rides stuck (open at the end)") && summary.met("rides paid (drivers' earnings today)"), "\(report.stdout)")
        // Asked again while the machine is loaded (a call can time out): the payment as orders has it.
        var payment = (status: Int32(0), stdout: "", stderr: "")
        var paid = JSONValue.null
        for _ in 0..<10 where paid == .null {
            payment = try await runCommand(
                Binaries.ridectl,
                ["call", "orders", "payment", #"{"caller":{"role":"rider","id":"\#(riderID)"},"id":"\#(orderID)"}"#, "--broker", broker],
                environment: operatorKeys)
            paid = (try? JSONCoding.decode(JSONValue.self, from: Array(payment.stdout.utf8))) ?? .null
            if paid == .null { try await Task.sleep(for: .seconds(2)) }
        }
        #expect(paid["rider_id"]?.stringValue == riderID && paid["order_id"]?.stringValue == orderID, "\(payment.stdout) \(payment.stderr)")
        #expect(paid["amount_cents"] != nil && paid["amount_cents"] != 1_000_000, "the forged fare was not charged: \(payment.stdout)")

        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(20)) == 0)
        try? FileManager.default.removeItem(atPath: scratch)
    }
}
