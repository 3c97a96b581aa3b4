import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import TestPostgres
import Testing
import Wire
import Yams

/// `docker-compose.yml` and `deploy/` stay true without a Docker engine: each service's command and
/// environment are run through the real binary with `--check`, and every executable has a service.
@Suite(.timeLimit(.minutes(8))) struct ComposeTests {
    /// The port of a command's `--http` (its /health, /livez, /readyz and /metrics).
    static func httpPort(_ arguments: [String]) -> String? { port(of: "--http", in: arguments) }

    /// The port of a command's `flag` (`--pub tcp://*:5555` → 5555).
    static func port(of flag: String, in arguments: [String]) -> String? {
        arguments.firstIndex(of: flag).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1].split(separator: ":").last.map(String.init) : nil }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct ComposeService {
        var name: String
        var command: [String]
        var environment: [String: String]
        var ports: [String]
        var healthcheck: [String]?
        /// `volume:path` mounts.
        var volumes: [String] = []
        /// The services it waits for (`depends_on`).
        var dependsOn: [String] = []
        /// The secrets mounted into it (each at `/run/secrets/<name>`).
        var secrets: [String] = []

        /// Its environment with each mounted secret's path replaced by `path(secret)`.
        func environment(secretPath path: (String) throws -> String) rethrows -> [String: String] {
            var environment = environment
            for secret in secrets {
                let mounted = "/run/secrets/\(secret)"
                for (key, value) in environment where value == mounted { environment[key] = try path(secret) }
            }
            return environment
        }
    }

    /// The file of each secret the compose file declares (top-level `secrets`), as a full path.
    static func secretFiles() throws -> [String: String] {
        guard let secrets = try document()["secrets"] as? [String: Any] else { return [:] }
        return try secrets.mapValues { entry in
            guard let file = (entry as? [String: Any])?["file"] as? String else { throw TestFailure("a secret without a file: \(entry)") }
            return root.appendingPathComponent(file).path
        }
    }

    /// The PostgreSQL URL a service is given (in the secret its RIDE_DATABASE_URL_FILE names).
    static func databaseURL(of service: ComposeService) throws -> String? {
        guard let file = service.environment["RIDE_DATABASE_URL_FILE"] else { return nil }
        guard file.hasPrefix("/run/secrets/") else { throw TestFailure("service \(service.name): RIDE_DATABASE_URL_FILE is not a secret: \(file)") }
        return try secret(String(file.dropFirst("/run/secrets/".count)))
    }

    /// A secret's value as the file holds it (one trailing newline dropped, as the services do).
    static func secret(_ name: String) throws -> String {
        guard let path = try secretFiles()[name] else { throw TestFailure("docker-compose.yml declares no secret \(name)") }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// The compose file as YAML.
    static func document() throws -> [String: Any] {
        let text = try String(contentsOf: root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        guard let document = try Yams.load(yaml: text) as? [String: Any] else { throw TestFailure("docker-compose.yml is not a mapping") }
        return document
    }

    /// The database service (an upstream image, not ours): its user, password and database.
    static func postgres() throws -> (user: String, password: String, database: String) {
        guard let services = try document()["services"] as? [String: Any], let postgres = services["postgres"] as? [String: Any],
            let environment = postgres["environment"] as? [String: Any], let user = environment["POSTGRES_USER"] as? String,
            let passwordFile = environment["POSTGRES_PASSWORD_FILE"] as? String, passwordFile.hasPrefix("/run/secrets/"),
            let database = environment["POSTGRES_DB"] as? String
        else {
            throw TestFailure("docker-compose.yml has no postgres service with POSTGRES_USER, POSTGRES_PASSWORD_FILE (a secret) and POSTGRES_DB")
        }
        return (user, try secret(String(passwordFile.dropFirst("/run/secrets/".count))), database)
    }

    /// The platform's own services (the postgres service runs an upstream image).
    static func services() throws -> [ComposeService] {
        guard let services = try document()["services"] as? [String: Any] else {
            throw TestFailure("docker-compose.yml has no services")
        }
        return try services.keys.sorted().filter { $0 != "postgres" }.map { name in
            guard let service = services[name] as? [String: Any] else { throw TestFailure("service \(name) is not a mapping") }
            guard let command = service["command"] as? [String], !command.isEmpty else {
                throw TestFailure("service \(name): command must be a list (exec form)")
            }
            var environment: [String: String] = [:]
            if let map = service["environment"] as? [String: Any] {
                for (key, value) in map { environment[key] = "\(value)" }
            } else if let list = service["environment"] as? [String] {
                for entry in list {
                    let parts = entry.split(separator: "=", maxSplits: 1)
                    environment[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
                }
            }
            let ports = (service["ports"] as? [Any])?.map { "\($0)" } ?? []
            let healthcheck = (service["healthcheck"] as? [String: Any])?["test"] as? [String]
            let volumes = (service["volumes"] as? [Any])?.map { "\($0)" } ?? []
            let dependsOn = (service["depends_on"] as? [String: Any]).map { Array($0.keys) } ?? []
            let secrets = (service["secrets"] as? [Any])?.map { "\($0)" } ?? []
            return ComposeService(
                name: name, command: command, environment: environment, ports: ports, healthcheck: healthcheck, volumes: volumes,
                dependsOn: dependsOn, secrets: secrets)
        }
    }

    @Test func everyServiceCommandAndEnvironmentIsAcceptedByTheRealBinary() async throws {
        let services = try Self.services()
        #expect(!services.isEmpty)
        for service in services {
            let executable = "\(Binaries.directory)/\(service.command[0])"
            #expect(FileManager.default.isExecutableFile(atPath: executable), "service \(service.name) runs \(service.command[0]), which the package builds")
            // Only the compose environment, as in a container: nothing inherited from this shell; the
            // secrets' files where compose would mount them.
            let files = try Self.secretFiles()
            let environment = try service.environment { secret in
                guard let file = files[secret] else { throw TestFailure("service \(service.name) mounts an undeclared secret \(secret)") }
                return file
            }
            let result = try await runCommand(
                executable, Array(service.command.dropFirst()) + ["--check"], environment: environment, inheritEnvironment: false,
                // A check takes a fraction of a second; in make test's first minute one took over 60 s to finish.
                timeout: .seconds(180))
            #expect(result.status == 0, "service \(service.name): \(result.stderr)")
            #expect(result.stdout.contains("configuration OK"), "service \(service.name): \(result.stdout)")
        }
    }

    @Test func secretsReachTheServicesAsFilesNeverAsPlainEnvironment() throws {
        let files = try Self.secretFiles()
        #expect(Set(files.keys) == ["database_url", "postgres_password", "token_secret", "gateway_secret_key"], "\(files.keys.sorted())")
        for (name, path) in files { #expect(FileManager.default.fileExists(atPath: path), "secret \(name): \(path) exists") }
        let plain = ["RIDE_DATABASE_URL", "RIDE_TOKEN_SECRET", "RIDE_SECRET_KEY", "POSTGRES_PASSWORD", "RIDE_CURVE_SECRET_KEY"]
        for service in try Self.services() {
            for variable in plain { #expect(service.environment[variable] == nil, "service \(service.name) sets \(variable) in plain environment") }
            for (key, value) in service.environment where key.hasSuffix("_FILE") && value.hasPrefix("/run/secrets/") {
                let secret = String(value.dropFirst("/run/secrets/".count))
                #expect(service.secrets.contains(secret), "service \(service.name): \(key) names \(secret), which it does not mount")
            }
        }
        let users = try #require(try Self.services().first { $0.name == "users" })
        #expect(users.environment["RIDE_TOKEN_SECRET_FILE"] == "/run/secrets/token_secret")
        #expect(try Self.secret("token_secret").utf8.count >= 32, "the token key file holds at least 32 bytes")
    }

    @Test func everyExecutableOfThePackageHasAComposeService() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let executables = manifest.matches(of: /\.executable\(name: "(ride-[a-z-]+)"/).map { String($0.output.1) }
        #expect(executables.contains("ride-bus"))
        let commands = Set(try Self.services().map { $0.command[0] })
        for executable in executables {
            #expect(commands.contains(executable), "\(executable) has a service in docker-compose.yml")
        }
    }

    @Test func publishedPortsMatchTheFlagsAndHealthchecksUseARealCommand() async throws {
        for service in try Self.services() {
            let flagPorts = Set(
                service.command.compactMap { argument -> String? in
                    guard argument.hasPrefix("tcp://") || argument.contains(":"), let port = argument.split(separator: ":").last else { return nil }
                    return Int(port) != nil ? String(port) : nil
                })
            for mapping in service.ports {
                let containerPort = String(mapping.split(separator: ":").last!.split(separator: "/").first!)
                #expect(flagPorts.contains(containerPort), "service \(service.name) publishes \(containerPort), which its command listens on")
            }
            if let test = service.healthcheck {
                #expect(test.first == "CMD")
                let executable = "\(Binaries.directory)/\(test[1])"
                #expect(FileManager.default.isExecutableFile(atPath: executable))
                let help = try await runCommand(executable, [test[2], "--help"])
                #expect(help.status == 0, "healthcheck of \(service.name) uses `\(test[1]) \(test[2])`, which exists")
                // Healthy means ready (database, broker, bus subscriptions), on the service's own --http.
                let url = URLComponents(string: test.last ?? "")
                #expect(url?.path == "/readyz", "healthcheck of \(service.name) asks /readyz: \(test)")
                #expect(url?.port.map(String.init) == Self.httpPort(Array(service.command.dropFirst())), "healthcheck of \(service.name) asks its own --http port: \(test)")
            }
        }
    }

    /// `docker compose up --scale orders=3` works by design: the services that scale publish no
    /// fixed host port (a second replica would collide) and keep their state in the database (waiting
    /// for it to be healthy) or in their volume.
    @Test func theServicesThatScalePublishNoHostPortAndShareTheirState() throws {
        let postgres = try Self.postgres()
        for service in try Self.services() where ["users", "orders", "trips", "notifications"].contains(service.name) {
            #expect(service.ports.isEmpty, "service \(service.name) publishes \(service.ports): --scale would collide")
            if let url = try Self.databaseURL(of: service) {
                #expect(url == "postgres://\(postgres.user):\(postgres.password)@postgres:5432/\(postgres.database)", "service \(service.name): \(url)")
                #expect(service.dependsOn.contains("postgres"), "service \(service.name) waits for the database")
                #expect(service.volumes.isEmpty, "service \(service.name) keeps its state in PostgreSQL, not a volume: \(service.volumes)")
            } else {
                #expect(service.volumes.count == 1 && service.volumes[0].hasSuffix(":/var/lib/ride"), "service \(service.name): \(service.volumes)")
            }
        }
        #expect(try Self.services().first { $0.name == "users" }?.environment["RIDE_TOKEN_SECRET_FILE"] != nil, "every users replica signs with one key")
    }

    /// Tracking's shards: every shard K of N exactly once, each with its own ingest port, so that no
    /// device is kept twice or by no one; their state in the shared database (each loads its own
    /// devices) or each on a volume of its own (no shard opens another's file).
    @Test func theTrackingShardsCoverEveryShardOnceEachWithItsOwnIngest() throws {
        let shards = try Self.services().filter { $0.command[0] == "ride-tracking" }
        let flags = shards.map { service in service.command.firstIndex(of: "--shard").map { service.command[$0 + 1] } ?? "0/1" }
        let counts = Set(flags.compactMap { $0.split(separator: "/").last.flatMap { Int($0) } })
        #expect(counts == [shards.count], "every tracking service says the same shard count, the number of them: \(flags)")
        #expect(Set(flags) == Set((0..<shards.count).map { "\($0)/\(shards.count)" }), "\(flags)")
        for shard in shards {
            if try Self.databaseURL(of: shard) != nil {
                #expect(shard.dependsOn.contains("postgres") && shard.volumes.isEmpty, "\(shard.name) waits for the database and needs no volume")
            }
        }
        let onVolumes = try shards.filter { try Self.databaseURL(of: $0) == nil }
        #expect(Set(onVolumes.map(\.volumes)).count == onVolumes.count, "a volume each: \(onVolumes.map(\.volumes))")
        let ingest = shards.map { service in service.command.firstIndex(of: "--ingest").map { service.command[$0 + 1] } ?? "" }
        #expect(Set(ingest).count == shards.count, "an ingest port each: \(ingest)")
    }

    @Test func theDockerfileBuildsEveryExecutableIntoTheRuntimeImage() throws {
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("FROM swift:6.3"), "build stage on the Swift 6.3 image")
        #expect(dockerfile.contains("libzmq5"), "runtime stage has libzmq5")
        #expect(!dockerfile.contains("libcurl4"), "no libcurl: nothing links FoundationNetworking (StandardWebhooksIntegrationTests checks the executables)")
        #expect(dockerfile.contains("-name 'ride-*' -o -name ridectl"), "every ride-* executable and ridectl are copied")
        // The packages resolved in a cached layer: after the manifest is copied, before any source.
        let steps = ["COPY Package.swift ./", "RUN swift package resolve", "COPY Shared Shared", "RUN swift build -c release"]
        let positions = steps.map { dockerfile.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil } && positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "\(steps) in this order")
        let ignore = try String(contentsOf: Self.root.appendingPathComponent(".dockerignore"), encoding: .utf8)
        #expect(ignore.contains(".build/"))
    }
}

/// The compose file as local processes: each service's own command and environment (only the
/// host names, ports and volume paths rewritten for this machine; the postgres service is a server
/// the test starts), users, orders, trips and notifications twice on the shared database, as
/// `--scale` would run them, tracking as the file's shards, and a whole ride through the gateway
/// (the driver's locations reach tracking by the `ingest` op, so some are passed between shards).
@Suite(.serialized) struct ComposeAsProcessesTests {
    @Test func theComposeFileRunsAsLocalProcessesWithReplicasAndCarriesARide() async throws {
        try await withTestBus("compose-local") { testBus in
            let services = try ComposeTests.services()
            let replicas = ["users": 2, "orders": 2, "trips": 2, "notifications": 2]
            // The postgres service: a server of this test's own, with the file's database.
            let database = try ComposeTests.postgres()
            let postgres = try await TestPostgresServer.shared()
            try await postgres.createDatabase(database.database)
            // Every port the file names, mapped to a free one here (the database's to the server's).
            var ports: [String: String] = ["5432": String(postgres.port)]
            for service in services {
                for text in service.command + Array(service.environment.values) {
                    for match in text.matches(of: /:(\d{4,5})\b/) where ports[String(match.output.1)] == nil {
                        ports[String(match.output.1)] = String(try FreePort.next())
                    }
                }
            }
            // Each bus on a loopback address of its own (Linux routes all of 127/8 to lo): the same
            // ports, as on two hosts; every other service on 127.0.0.1, listening there only (a
            // wildcard would take the second bus's ports).
            let buses = services.filter { $0.command[0] == "ride-bus" }.map(\.name)
            let addresses = Dictionary(uniqueKeysWithValues: buses.enumerated().map { ($1, "127.0.0.\($0 + 1)") })
            func local(_ text: String, volume: String?, address: String = "127.0.0.1") -> String {
                var text = text.replacingOccurrences(of: "0.0.0.0:", with: "\(address):").replacingOccurrences(of: "tcp://*:", with: "tcp://\(address):")
                    .replacingOccurrences(of: "@postgres:", with: "@127.0.0.1:")
                for (bus, busAddress) in addresses { text = text.replacingOccurrences(of: "tcp://\(bus):", with: "tcp://\(busAddress):") }
                if let volume { text = text.replacingOccurrences(of: "/var/lib/ride", with: "\(testBus.scratch)/\(volume)") }
                return text.replacing(/:(\d{4,5})\b/) { match in ":" + (ports[String(match.output.1)] ?? String(match.output.1)) }
            }
            // The buses first, the gateway last (depends_on), the rest between.
            func rank(_ name: String) -> Int { buses.contains(name) ? 0 : name == "gateway" ? 2 : 1 }
            let ordered = services.sorted { (rank($0.name), $0.name) < (rank($1.name), $1.name) }
            for service in ordered {
                let volume = service.volumes.first.map { String($0.split(separator: ":")[0]) }
                if let volume { try FileManager.default.createDirectory(atPath: "\(testBus.scratch)/\(volume)", withIntermediateDirectories: true) }
                // Each secret's file, written here with its host names and ports rewritten too.
                var environment = try service.environment { secret in
                    let path = "\(testBus.scratch)/secret-\(secret)"
                    try local(try ComposeTests.secret(secret), volume: volume).write(toFile: path, atomically: true, encoding: .utf8)
                    return path
                }.mapValues { local($0, volume: volume) }
                // The production cost of a password hash (600 000 rounds) takes seconds per sign-up in a
                // debug build on a loaded machine: longer than the gateway waits for users.
                if service.name == "users" { environment["RIDE_PASSWORD_ROUNDS"] = "2000" }
                let address = addresses[service.name] ?? "127.0.0.1"
                for instance in 1...(replicas[service.name] ?? 1) {
                    var arguments = service.command.dropFirst().map { local($0, volume: volume, address: address) }
                    if instance > 1, let index = arguments.firstIndex(of: "--http") { arguments[index + 1] = "127.0.0.1:\(try FreePort.next())" }
                    let name = instance == 1 ? "compose-\(service.name)" : "compose-\(service.name)-\(instance)"
                    try testBus.supervisor.start(name: name, executable: "\(Binaries.directory)/\(service.command[0])", arguments: arguments, environment: environment)
                    // What compose waits for before starting what depends on it: its healthcheck's URL.
                    let path = service.healthcheck.flatMap { URLComponents(string: $0.last ?? "")?.path } ?? "/health"
                    let health = "http://\(address):\(ComposeTests.httpPort(arguments) ?? "0")\(path)"
                    guard await waitUntilHealthy(health, timeout: .seconds(30), stillRunning: { testBus.supervisor.isRunning(name) }) else {
                        throw TestFailure("\(name) did not become healthy at \(health)")
                    }
                }
            }
            // Every service's workers are registered with both buses, both replicas' of the scaled ones.
            let scaled = ["users", "orders", "trips", "notifications"]
            let trackingShards = services.filter { $0.command[0] == "ride-tracking" }.count
            let tracking = trackingShards == 1 ? ["tracking"] : ["tracking"] + (0..<trackingShards).map(BusContract.Service.trackingShard)
            for bus in buses {
                let busHealth = "http://\(addresses[bus] ?? ""):\(ports["9100"] ?? "0")/health"
                try await eventually("\(bus): two instances' workers of \(scaled), and workers of \(tracking)") {
                    let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealth).body))
                    func workers(_ service: String) -> Double { health["details"]?["services"]?[service]?["workers"]?.numberValue ?? 0 }
                    return scaled.allSatisfy { workers($0) >= 2 * Double(defaultWorkerConcurrency) } && tracking.allSatisfy { workers($0) > 0 }
                }
            }
            guard let gatewayPort = ports["8080"].flatMap(Int.init), let gatewayHealth = ports["9106"].flatMap(Int.init) else {
                throw TestFailure("the gateway's ports are not in docker-compose.yml: \(ports)")
            }
            let apps = try await GatewayIntegrationTests.Apps.signUp(TestGateway(bus: testBus, port: gatewayPort, statusPort: gatewayHealth))
            let id = try await apps.ride()
            let ride = try await apps.gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body
            #expect(ride["status"] == "COMPLETED" && ride["fare"]?["total_cents"] != nil, "\(ride)")
        }
    }
}
