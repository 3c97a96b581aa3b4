import Foundation
import Geo
import ServiceKit
import Testing
import TrackingSDK
import Wire
import ZeroMQ

/// `docker compose up`, for real: the repository's docker-compose.yml brought up by docker-compose
/// against podman, from the image `deploy/containers/test` built (`make test-containers`). Rides
/// flow all along — the simulator's riders and drivers, and a rider and a driver of the test's,
/// all from this host through the published edge and device ingest only — while the services
/// scale, one container of every service and each bus is killed in turn, and PostgreSQL restarts.
/// Afterwards no ride is stuck, lost or doubled (the host harness's checks, read through the
/// operator's `ridectl` container), and the buses cannot be reached from outside the network.
@Suite(.serialized, .enabled(if: ContainerGate.runs, Comment(rawValue: ContainerGate.skipped)), .timeLimit(.minutes(20)))
struct ComposeContainersTests {
    static let project = ComposeProject(name: "ride-compose-test")
    /// The published edge, asked again after a 503 storage_unavailable: podman's network drops the
    /// services' database connections for a moment when a container joins it (the services say so
    /// and recover within a second or two).
    static let edge = TestGateway(port: 8080, statusPort: 0, retriesUnavailable: true)
    static let ingest = ["tcp://127.0.0.1:5558", "tcp://127.0.0.1:5658"]
    /// Every service that runs a platform process, in the order they are killed; the buses last.
    static let killed = ["users", "orders", "trips", "notifications", "tracking", "tracking-1", "gateway", "bus", "bus-2"]

    @Test func ridesFlowThroughScalingKillsAndADatabaseRestartWithNoneStuckLostOrDoubled() async throws {
        let project = Self.project
        let serverKey = "\(ComposeProject.root)/\(ComposeTests.curveKeysFolder)/server.pub"
        guard FileManager.default.fileExists(atPath: serverKey) else {
            throw TestFailure("no \(serverKey): `make compose-secrets` first (make test-containers does)")
        }
        _ = try? await project.compose(["down", "-v", "--remove-orphans"], timeout: .seconds(120))
        let companion = try project.runCompanion()
        // SIGKILL: after `terminate()` (SIGTERM) a companion was found still running once CI had
        // ended — a signal ignored when a shell starts stays ignored, whatever the script says.
        defer { kill(companion.processIdentifier, SIGKILL) }
        var figures: [(String, String)] = []
        do {
            // Up, as a user types it (the image is built already: --no-build).
            let started = ContinuousClock.now
            try await project.compose(["up", "-d", "--no-build"], timeout: .seconds(300))
            try await project.waitUntilHealthy(try await project.containers(), timeout: .seconds(180))
            figures.append(
                ("docker-compose up to every container healthy", String(format: "%.1f s", (ContinuousClock.now - started).seconds)))

            // The simulator from this host, as apps: the published edge and ingest only, no key of
            // the bus (`simulate --gateway`), under way all along.
            let simulator = Task {
                try await runCommand(
                    Binaries.ridectl,
                    [
                        "simulate", "--drivers", "8", "--riders", "8", "--duration", "150", "--grace", "240", "--gateway", Self.edge.base,
                        "--ingest", Self.ingest.joined(separator: ","), "--ingest-server-key-file", serverKey, "--publishable-key",
                        try Self.publishableKey(),
                        "--share-links", "",
                    ], environment: [:], timeout: .seconds(600))
            }
            defer { simulator.cancel() }  // a failure below stops it

            // A rider and a driver from this host, through the published edge and ingest only.
            // A new rider and driver for each ride (one pair's fixes follow one clock, and each ride
            // starts its driver where the first did).
            _ = try await GatewayIntegrationTests.Apps.signUp(Self.edge, pair: 1).ride()
            try await streamThroughThePublishedIngest()

            // Scaled while rides flow: the edge finds the second gateway by DNS.
            let scale = ["--scale", "orders=3", "--scale", "gateway=2"]
            try await project.compose(["up", "-d", "--no-build"] + scale)
            let (orders, gateways) = (try await project.containers(of: "orders"), try await project.containers(of: "gateway"))
            #expect(orders.count == 3 && gateways.count == 2, "\(orders), \(gateways)")
            try await project.waitUntilHealthy(try await project.containers())
            _ = try await GatewayIntegrationTests.Apps.signUp(Self.edge, pair: 2).ride()

            // One container of each service killed in turn (SIGKILL: a crash); its restart policy brings it back.
            for service in Self.killed {
                let container = try #require(try await project.containers(of: service).first)
                let pid = try await ComposeProject.crash(container)
                let killedAt = ContinuousClock.now
                try await eventually("\(container) restarted", timeout: .seconds(60)) {
                    (try? await ComposeProject.pid(of: container)).map { $0 != pid } ?? false
                }
                try await project.waitUntilHealthy([container])
                figures.append(("\(service): killed to healthy again", String(format: "%.1f s", (ContinuousClock.now - killedAt).seconds)))
                try await Task.sleep(for: .seconds(3))
            }
            figures.append(("services that lost the database before restart", try await servicesThatLostTheirDatabase()))
            let restartedAt = ContinuousClock.now
            try await project.compose(["restart", "postgres"])
            try await project.waitUntilHealthy(try await project.containers(of: "postgres"))
            figures.append(("postgres: restart to healthy", String(format: "%.1f s", (ContinuousClock.now - restartedAt).seconds)))
            _ = try await GatewayIntegrationTests.Apps.signUp(Self.edge, pair: 3).ride()

            // The simulation ends; nothing stuck, lost or doubled.
            let simulation = try await simulator.value
            let report = SimulationReport(text: simulation.stdout)
            #expect(
                simulation.status == 0,
                "the simulator exited \(simulation.status):\n\(simulation.stdout)\n\(simulation.stderr.suffix(3000))")
            let tally = RideTally(report: report, orderEvents: try await events("orders"), tripEvents: try await events("trips"))
            print(
                "compose run — docker-compose.yml in containers (podman \(try await ComposeProject.podman(["--version"])))\n\(tally.lines)")
            tally.expectNothingLostOrDoubled()

            try await theBusesCannotBeReachedFromOutside()
            for (what, figure) in figures { print("  \(what.padding(toLength: 48, withPad: " ", startingAt: 0)) \(figure)") }
        } catch {
            var story: [String] = []
            for container in (try? await project.containers()) ?? [] {
                story.append(
                    "\(container) (\(await ComposeProject.health(of: container))):\n\(await ComposeProject.lastLines(of: container))")
            }
            print("DIGEST compose run failed: \(error)\n" + story.joined(separator: "\n"))
            // RIDE_COMPOSE_KEEP=1 leaves the containers to look at (docker-compose -p ride-compose-test …).
            if ProcessInfo.processInfo.environment["RIDE_COMPOSE_KEEP"] != "1" {
                _ = try? await project.compose(["down", "-v", "--remove-orphans"], timeout: .seconds(120))
            }
            throw error
        }
        try await project.compose(["down", "-v", "--remove-orphans"], timeout: .seconds(120))
    }

    /// Every event of a service's outbox, read as an operator does: `docker compose run ridectl call`.
    func events(_ service: String) async throws -> [JSONValue] {
        try await Outboxes.events { params in
            try JSONCoding.decode(
                JSONValue.self,
                from: Array(try await Self.project.compose(["run", "--rm", "-T", "ridectl", "call", service, "events", params]).utf8))
        }
    }

    /// A driver's phone streams through the published ingest (CURVE, with the server key the compose
    /// secrets hold, and the credential the driver's session gives). Another driver than the rides'
    /// (whose device the gateway keeps), far from their pickups.
    func streamThroughThePublishedIngest() async throws {
        let phone = "+380671110077"
        _ = try await Self.edge.signUp(
            #"{"role":"driver","name":"Dave","phone_number":"\#(phone)","password":"driving9","device_id":"compose-sdk-phone","car":{"model":"Leaf","license_plate":"AB 7777"}}"#,
            phone: phone, password: "driving9")
        let session = try await Self.edge.request("POST", "/v1/sessions", #"{"phone_number":"\#(phone)","password":"driving9"}"#)
        var configuration = TestTracking.sdkConfiguration(endpoints: Self.ingest)
        configuration.publishableKey = try Self.publishableKey()
        configuration.deviceCredential = try #require(session.body["device_credential"]?.stringValue, "\(session.body)")
        configuration.ingestServerKey = try CurveKeyDirectory.readKey(
            "\(ComposeProject.root)/\(ComposeTests.curveKeysFolder)/server.pub", what: "the ingest's public key")
        let device = try TrackingDevice(
            id: "compose-sdk-phone", configuration: configuration, provider: FixedLocation(GeoPoint(latitude: 50.4501, longitude: 30.5234)))
        device.isAvailable = true
        device.startTracking()
        try await eventually("the phone's batches are acknowledged through the published ingest", timeout: .seconds(30)) {
            device.statistics.acknowledged >= 3
        }
        #expect(!device.errors.contains(.invalidDeviceCredential))
        await device.close()
    }

    /// The drivers' SDKs' publishable key: the first the compose file gives tracking.
    static func publishableKey() throws -> String {
        let tracking = try #require(try ComposeTests.services().first { $0.name == "tracking" })
        return try #require(tracking.environment["RIDE_PUBLISHABLE_KEYS"]?.split(separator: ",").first.map(String.init))
    }

    /// The services that found PostgreSQL unreachable before it restarted, with their first such
    /// line: a bridge whose MAC moved made every service lose it (deploy/containers/companion pins
    /// it); one loss was still seen since, in one of four runs (notifications, a connection error),
    /// cause not found. Printed, not asserted, until it is: the requests meanwhile got 503 and were
    /// sent again, and the checks of the rides stand.
    func servicesThatLostTheirDatabase() async throws -> String {
        var lost: [String] = []
        for container in try await Self.project.containers() {
            if let line = try await ComposeProject.logLines(of: container).first(where: { $0.contains("database not reachable;") }) {
                lost.append("\(container): \(line.prefix(240))")
            }
        }
        return lost.isEmpty ? "none" : "\(lost.count)\n    " + lost.joined(separator: "\n    ")
    }

    /// From this host, outside the compose network: no bus port is published, and a peer that
    /// reaches a bus container's address without an admitted CURVE key gets no answer.
    func theBusesCannotBeReachedFromOutside() async throws {
        for port in [5555, 5556, 5557, 9100] {
            let connect = try await runCommand("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"])
            #expect(connect.status != 0, "the host's port \(port) is closed: \(connect.stderr)")
        }
        let ingest = try await runCommand("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/5558"])
        #expect(ingest.status == 0, "the probe tells an open port (the published ingest): \(ingest.stderr)")
        let bus = try #require(try await Self.project.containers(of: "bus").first)
        let address = try await ComposeProject.podman([
            "inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", bus,
        ])
        let socket = try Socket(.dealer)
        defer { socket.close() }
        try socket.setReceiveTimeout(milliseconds: 2000)
        try socket.connect("tcp://\(address):5557")
        try socket.send(message: [Frame(), Frame(frame: "MDPC01"), Frame(frame: "users"), Frame(frame: "ping"), Frame(frame: "{}")])
        #expect((try? socket.receive()) == nil, "a plain peer at \(address):5557 is not answered")
    }
}
