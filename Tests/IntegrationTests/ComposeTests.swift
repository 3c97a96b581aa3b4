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
        arguments.firstIndex(of: flag).flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1].split(separator: ":").last.map(String.init) : nil
        }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct ComposeService {
        var name: String
        /// Its `entrypoint` and `command` together: the executable first.
        var command: [String]
        var environment: [String: String]
        var ports: [String]
        var healthcheck: [String]?
        /// `volume:path` mounts.
        var volumes: [String] = []
        /// The services it waits for (`depends_on`).
        var dependsOn: [String] = []
        /// The secrets mounted into it.
        var secrets: [SecretMount] = []
        /// Container ports open inside the compose network only.
        var expose: [String] = []
        /// Set for a tool that `docker compose up` does not start (`docker compose run` does).
        var profiles: [String] = []

        /// Lays its secrets out under `root` as compose mounts them (each at `root` + its target,
        /// holding `contents(secret)`); its environment with every path into them pointing there
        /// (a mounted file, or a folder of mounts: RIDE_CURVE_KEYS).
        func mountSecrets(at root: String, contents: (String) throws -> Data) throws -> [String: String] {
            for secret in secrets {
                let url = URL(fileURLWithPath: root + secret.target)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try contents(secret.source).write(to: url)
            }
            return environment.mapValues { value in
                secrets.contains { $0.target == value || $0.target.hasPrefix(value + "/") } ? root + value : value
            }
        }

        /// The secrets mounted under `folder`, by their path there (`clients/orders.key`).
        func mounts(under folder: String) -> [String: String] {
            Dictionary(
                secrets.filter { $0.target.hasPrefix(folder + "/") }.map { (String($0.target.dropFirst(folder.count + 1)), $0.source) },
                uniquingKeysWith: { first, _ in first })
        }
    }

    /// A secret mounted into a service: `source` at `target` (`/run/secrets/<source>` unless named).
    struct SecretMount: Equatable {
        var source: String
        var target: String

        static func parse(_ entry: Any, service: String) throws -> SecretMount {
            if let name = entry as? String { return SecretMount(source: name, target: "/run/secrets/\(name)") }
            guard let map = entry as? [String: Any], let source = map["source"] as? String else {
                throw TestFailure("service \(service): secret \(entry)")
            }
            return SecretMount(source: source, target: (map["target"] as? String) ?? "/run/secrets/\(source)")
        }
    }

    /// Where the secrets the compose file mounts live (`make compose-secrets`; ignored by git): the
    /// tests make their own with `ridectl keys compose` and read them from there instead.
    static let secretsFolder = "deploy/compose-secrets"
    static let curveKeysFolder = secretsFolder + "/curve"

    /// The file of each secret the compose file declares (top-level `secrets`), as a full path: in
    /// `folder`, made by `ridectl keys compose`, when given.
    static func secretFiles(in folder: String? = nil) throws -> [String: String] {
        guard let secrets = try document()["secrets"] as? [String: Any] else { return [:] }
        return try secrets.mapValues { entry in
            guard let file = (entry as? [String: Any])?["file"] as? String else { throw TestFailure("a secret without a file: \(entry)") }
            if let folder, file.hasPrefix(secretsFolder + "/") { return folder + file.dropFirst(secretsFolder.count) }
            return root.appendingPathComponent(file).path
        }
    }

    /// Whether a secret is one of the CURVE keys.
    static func isCurveKey(_ secret: String) throws -> Bool {
        let file = ((try document()["secrets"] as? [String: Any])?[secret] as? [String: Any])?["file"] as? String
        return file?.hasPrefix(curveKeysFolder + "/") ?? false
    }

    /// The secrets as `make compose-secrets` makes them (`ridectl keys compose`), once, in a scratch folder.
    static let madeSecrets = Task<String, any Error> {
        let folder = try makeScratchDirectory("compose-secrets") + "/secrets"
        let made = try await runCommand(Binaries.ridectl, ["keys", "compose", folder])
        guard made.status == 0 else { throw TestFailure("ridectl keys compose: \(made.stderr)") }
        return folder
    }

    /// The PostgreSQL URL a service is given (in the secret its RIDE_DATABASE_URL_FILE names).
    static func databaseURL(of service: ComposeService, secrets folder: String) throws -> String? {
        guard let file = service.environment["RIDE_DATABASE_URL_FILE"] else { return nil }
        guard let mount = service.secrets.first(where: { $0.target == file }) else {
            throw TestFailure("service \(service.name): RIDE_DATABASE_URL_FILE is not a secret: \(file)")
        }
        return try secret(mount.source, in: folder)
    }

    /// A secret's value as the file in `folder` holds it (one trailing newline dropped, as the services do).
    static func secret(_ name: String, in folder: String) throws -> String {
        guard let path = try secretFiles(in: folder)[name] else { throw TestFailure("docker-compose.yml declares no secret \(name)") }
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
    static func postgres(secrets folder: String) throws -> (user: String, password: String, database: String) {
        guard let services = try document()["services"] as? [String: Any], let postgres = services["postgres"] as? [String: Any],
            let environment = postgres["environment"] as? [String: Any], let user = environment["POSTGRES_USER"] as? String,
            let passwordFile = environment["POSTGRES_PASSWORD_FILE"] as? String, passwordFile.hasPrefix("/run/secrets/"),
            let database = environment["POSTGRES_DB"] as? String
        else {
            throw TestFailure(
                "docker-compose.yml has no postgres service with POSTGRES_USER, POSTGRES_PASSWORD_FILE (a secret) and POSTGRES_DB")
        }
        return (user, try secret(String(passwordFile.dropFirst("/run/secrets/".count)), in: folder), database)
    }

    /// The image every platform service runs (deploy/Dockerfile).
    static let platformImage = "ridesharing:dev"

    /// The services that run an upstream image (the database, the edge), as the file has them.
    static func upstreamServices() throws -> [String: [String: Any]] {
        guard let services = try document()["services"] as? [String: Any] else { throw TestFailure("docker-compose.yml has no services") }
        return services.compactMapValues { $0 as? [String: Any] }.filter { ($0.value["image"] as? String) != platformImage }
    }

    /// The platform's own services (those on `platformImage`).
    static func services() throws -> [ComposeService] {
        guard let services = try document()["services"] as? [String: Any] else {
            throw TestFailure("docker-compose.yml has no services")
        }
        let upstream = try upstreamServices()
        return try services.keys.sorted().filter { upstream[$0] == nil }.map { name in
            guard let service = services[name] as? [String: Any] else { throw TestFailure("service \(name) is not a mapping") }
            let entrypoint = service["entrypoint"] as? [String] ?? []
            guard let command = (service["command"] as? [String]).map({ entrypoint + $0 }), !command.isEmpty else {
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
            let secrets = try ((service["secrets"] as? [Any]) ?? []).map { try SecretMount.parse($0, service: name) }
            let expose = (service["expose"] as? [Any])?.map { "\($0)" } ?? []
            let profiles = (service["profiles"] as? [Any])?.map { "\($0)" } ?? []
            return ComposeService(
                name: name, command: command, environment: environment, ports: ports, healthcheck: healthcheck, volumes: volumes,
                dependsOn: dependsOn, secrets: secrets, expose: expose, profiles: profiles)
        }
    }

    /// Each process's secrets, laid out under `scratch` as compose would mount them: its environment.
    static func mountedEnvironment(of service: ComposeService, scratch: String, files: [String: String]) throws -> [String: String] {
        try service.mountSecrets(at: "\(scratch)/\(service.name)") { secret in
            guard let file = files[secret] else { throw TestFailure("service \(service.name) mounts an undeclared secret \(secret)") }
            return try Data(contentsOf: URL(fileURLWithPath: file))
        }
    }

    /// Every process runs with CURVE: `--check` says so, with nothing inherited from this shell.
    @Test func everyServiceCommandAndEnvironmentIsAcceptedByTheRealBinary() async throws {
        let services = try Self.services()
        #expect(!services.isEmpty)
        let files = try Self.secretFiles(in: try await Self.madeSecrets.value)
        let scratch = try makeScratchDirectory("compose-check")
        for service in services {
            let executable = "\(Binaries.directory)/\(service.command[0])"
            #expect(
                FileManager.default.isExecutableFile(atPath: executable),
                "service \(service.name) runs \(service.command[0]), which the package builds")
            // A tool (`docker compose run`) has no --check: its subcommand exists, and the whole-file test runs it.
            guard service.profiles.isEmpty else {
                #expect(
                    try await runCommand(executable, Array(service.command.dropFirst()) + ["--help"]).status == 0,
                    "service \(service.name): \(service.command)")
                continue
            }
            // Only the compose environment, as in a container: nothing inherited from this shell; the
            // secrets' files where compose would mount them.
            let environment = try Self.mountedEnvironment(of: service, scratch: scratch, files: files)
            let result = try await runCommand(
                executable, Array(service.command.dropFirst()) + ["--check"], environment: environment, inheritEnvironment: false,
                // A check takes a fraction of a second; in make test's first minute one took over 60 s to finish.
                timeout: .seconds(180))
            #expect(result.status == 0, "service \(service.name): \(result.stderr)")
            #expect(result.stdout.contains("configuration OK"), "service \(service.name): \(result.stdout)")
            #expect(
                result.stdout.contains("bus security          CURVE, own public key"),
                "service \(service.name) runs CURVE: \(result.stdout)")
            #expect(
                result.stdout.contains("mode                  production (secrets checked)"),
                "service \(service.name) runs in production mode: \(result.stdout)")
        }
    }

    @Test func secretsReachTheServicesAsFilesNeverAsPlainEnvironment() async throws {
        let folder = try await Self.madeSecrets.value
        let files = try Self.secretFiles(in: folder)
        let curve = try files.keys.filter(Self.isCurveKey)
        #expect(
            Set(files.keys).subtracting(curve) == [
                "database_url", "postgres_password", "token_secret", "notifications_key", "gateway_secret_key",
            ], "\(files.keys.sorted())")
        for (name, path) in files {
            #expect(FileManager.default.fileExists(atPath: path), "secret \(name): `ridectl keys compose` made \(path)")
        }
        // Every secret is made on each machine (`make compose-secrets`), never committed.
        #expect(curve.count >= 2)
        let ignored = try String(contentsOf: Self.root.appendingPathComponent(".gitignore"), encoding: .utf8)
        #expect(ignored.split(separator: "\n").contains("/\(Self.secretsFolder)/*"), ".gitignore keeps the generated secrets out of git")
        let tracked = try await runCommand("/usr/bin/git", ["-C", Self.root.path, "ls-files", Self.secretsFolder])
        #expect(
            tracked.status == 0 && tracked.stdout == "\(Self.secretsFolder)/README.md\n",
            "no secret of the compose file is committed: \(tracked.stdout)")
        let makefile = try String(contentsOf: Self.root.appendingPathComponent("Makefile"), encoding: .utf8)
        #expect(
            makefile.contains("compose-secrets:") && makefile.contains("ridectl keys compose $(COMPOSE_SECRETS)")
                && makefile.contains("COMPOSE_SECRETS = \(Self.secretsFolder)"))
        let plain = [
            "RIDE_DATABASE_URL", "RIDE_TOKEN_SECRET", "RIDE_SECRET_KEY", "POSTGRES_PASSWORD", "RIDE_CURVE_SECRET_KEY",
            "RIDE_CURVE_SERVER_SECRET_KEY",
        ]
        for service in try Self.services() {
            for variable in plain {
                #expect(service.environment[variable] == nil, "service \(service.name) sets \(variable) in plain environment")
            }
            for (key, value) in service.environment where key.hasSuffix("_FILE") && value.hasPrefix("/run/secrets/") {
                #expect(
                    service.secrets.contains { $0.target == value },
                    "service \(service.name): \(key) names \(value), which it does not mount")
            }
        }
        let users = try #require(try Self.services().first { $0.name == "users" })
        #expect(users.environment["RIDE_TOKEN_SECRET_FILE"] == "/run/secrets/token_secret")
        for name in ["token_secret", "gateway_secret_key", "postgres_password"] {
            let value = try Self.secret(name, in: folder)
            #expect(
                SecretPolicy.weakness(of: Array(value.utf8), minimumLength: 32) == nil,
                "\(name) is random and long: \(value.count) characters")
        }
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
                    guard argument.hasPrefix("tcp://") || argument.contains(":"), let port = argument.split(separator: ":").last else {
                        return nil
                    }
                    return Int(port) != nil ? String(port) : nil
                })
            for mapping in service.ports {
                let containerPort = String(mapping.split(separator: ":").last!.split(separator: "/").first!)
                #expect(
                    flagPorts.contains(containerPort), "service \(service.name) publishes \(containerPort), which its command listens on")
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
                #expect(
                    url?.port.map(String.init) == Self.httpPort(Array(service.command.dropFirst())),
                    "healthcheck of \(service.name) asks its own --http port: \(test)")
            }
        }
    }

    /// `docker compose up --scale orders=3 --scale gateway=2` works by design: the services that
    /// scale publish no fixed host port (a second replica would collide; the edge publishes the
    /// gateways') and keep their state in the database (waiting for it to be healthy), in their
    /// volume, or — the gateway — none.
    @Test func theServicesThatScalePublishNoHostPortAndShareTheirState() async throws {
        let folder = try await Self.madeSecrets.value
        let postgres = try Self.postgres(secrets: folder)
        for service in try Self.services() where ["users", "orders", "trips", "notifications", "gateway"].contains(service.name) {
            #expect(service.ports.isEmpty, "service \(service.name) publishes \(service.ports): --scale would collide")
            if let url = try Self.databaseURL(of: service, secrets: folder) {
                #expect(
                    url == "postgres://\(postgres.user):\(postgres.password)@postgres:5432/\(postgres.database)",
                    "service \(service.name): \(url)")
                #expect(service.dependsOn.contains("postgres"), "service \(service.name) waits for the database")
                #expect(service.volumes.isEmpty, "service \(service.name) keeps its state in PostgreSQL, not a volume: \(service.volumes)")
            } else if service.name == "gateway" {
                #expect(service.volumes.isEmpty, "the gateway keeps no state: \(service.volumes)")
            } else {
                #expect(
                    service.volumes.count == 1 && service.volumes[0].hasSuffix(":/var/lib/ride"),
                    "service \(service.name): \(service.volumes)")
            }
        }
        #expect(
            try Self.services().first { $0.name == "users" }?.environment["RIDE_TOKEN_SECRET_FILE"] != nil,
            "every users replica signs with one key")
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
            if shard.environment["RIDE_DATABASE_URL_FILE"] != nil {
                #expect(
                    shard.dependsOn.contains("postgres") && shard.volumes.isEmpty,
                    "\(shard.name) waits for the database and needs no volume")
            }
        }
        let onVolumes = shards.filter { $0.environment["RIDE_DATABASE_URL_FILE"] == nil }
        #expect(Set(onVolumes.map(\.volumes)).count == onVolumes.count, "a volume each: \(onVolumes.map(\.volumes))")
        let ingest = shards.map { service in service.command.firstIndex(of: "--ingest").map { service.command[$0 + 1] } ?? "" }
        #expect(Set(ingest).count == shards.count, "an ingest port each: \(ingest)")
    }

    @Test func theDockerfileBuildsEveryExecutableIntoTheRuntimeImage() throws {
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("FROM swift:6.3"), "build stage on the Swift 6.3 image")
        #expect(dockerfile.contains("libzmq5"), "runtime stage has libzmq5")
        #expect(
            !dockerfile.contains("libcurl4"),
            "no libcurl: nothing links FoundationNetworking (StandardWebhooksIntegrationTests checks the executables)")
        let collect = try String(contentsOf: Self.root.appendingPathComponent("deploy/collect-executables"), encoding: .utf8)
        #expect(
            collect.contains("ride-fuzz) return 1 ;; ride-* | ridectl) return 0"),
            "every ride-* executable and ridectl are copied, not the fuzzer")
        #expect(dockerfile.contains("deploy/collect-executables \"$(swift build"), "the build stage collects them")
        #expect(dockerfile.contains("ARG CONFIGURATION=release"), "a release build unless asked for another")
        // The packages resolved in a cached layer: after the manifest is copied, before any source.
        // Then the macros against the toolchain's swift-syntax (docs/contributing.md#the-macros), then the build.
        let steps = [
            "COPY Package.swift ./", "RUN swift package resolve", "COPY Shared Shared",
            "RUN export RIDE_WIRE_MACROS=\"$(Tools/wire-macros)\"",
            "swift build -c \"$CONFIGURATION\"",
        ]
        let positions = steps.map { dockerfile.range(of: $0)?.lowerBound }
        #expect(
            positions.allSatisfy { $0 != nil } && positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(),
            "\(steps) in this order")
        let ignore = try String(contentsOf: Self.root.appendingPathComponent(".dockerignore"), encoding: .utf8)
        #expect(ignore.contains(".build/"))
        // What `make test-containers` does not compile (it gives the runtime stage this checkout's
        // executables): the build stage has every folder a target lives in, and every system
        // library's headers the manifest asks apt for.
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let folders = Set(manifest.matches(of: /path: "([^"\/]+)\//).map { String($0.output.1) })
        #expect(
            folders.count >= 5 && folders.allSatisfy { dockerfile.contains("COPY \($0) \($0)") },
            "every target's folder copied: \(folders.sorted())")
        let packages = manifest.matches(of: /\.apt\(\[([^\]]*)\]\)/).flatMap {
            $0.output.1.matches(of: /"([^"]+)"/).map { String($0.output.1) }
        }
        let buildStage = try #require(dockerfile.components(separatedBy: "AS runtime").first)
        #expect(
            !packages.isEmpty
                && packages.allSatisfy { buildStage.contains("install -y --no-install-recommends \($0)") || buildStage.contains(" \($0) ") },
            "\(packages)")
        #expect(
            dockerfile.hasSuffix("FROM runtime\nCOPY --from=build /out/ /usr/local/bin/\n"),
            "the image: the runtime stage and the build stage's executables")
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
            // What `docker compose up` starts; the tools (`docker compose run`) are run after the ride.
            let services = try ComposeTests.services().filter(\.profiles.isEmpty)
            let tools = try ComposeTests.services().filter { !$0.profiles.isEmpty }
            let secrets = try await ComposeTests.madeSecrets.value
            let files = try ComposeTests.secretFiles(in: secrets)
            let replicas = ["users": 2, "orders": 2, "trips": 2, "notifications": 2]
            // The postgres service: a server of this test's own, with the file's database.
            let database = try ComposeTests.postgres(secrets: secrets)
            let postgres = try await TestPostgresServer.shared()
            try await postgres.createDatabase(database.database)
            // Every port the file names, mapped to a free one here (the database's to the server's).
            var ports: [String: String] = ["5432": String(postgres.port)]
            for service in services + tools {
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
                var text = text.replacingOccurrences(of: "0.0.0.0:", with: "\(address):").replacingOccurrences(
                    of: "tcp://*:", with: "tcp://\(address):"
                )
                .replacingOccurrences(of: "@postgres:", with: "@127.0.0.1:")
                for (bus, busAddress) in addresses { text = text.replacingOccurrences(of: "://\(bus):", with: "://\(busAddress):") }
                if let volume { text = text.replacingOccurrences(of: "/var/lib/ride", with: "\(testBus.scratch)/\(volume)") }
                return text.replacing(/:(\d{4,5})\b/) { match in ":" + (ports[String(match.output.1)] ?? String(match.output.1)) }
            }
            // Each secret's file where compose mounts it, with its host names and ports rewritten too
            // (not a CURVE key's: Z85 text may hold what looks like a port); the environment pointing there.
            func mountSecrets(of service: ComposeTests.ComposeService, volume: String?) throws -> [String: String] {
                try service.mountSecrets(at: "\(testBus.scratch)/secrets-\(service.name)") { secret in
                    guard let file = files[secret] else {
                        throw TestFailure("service \(service.name) mounts an undeclared secret \(secret)")
                    }
                    let data = try Data(contentsOf: URL(fileURLWithPath: file))
                    return try ComposeTests.isCurveKey(secret)
                        ? data : Data(local(String(decoding: data, as: UTF8.self), volume: volume).utf8)
                }.mapValues { local($0, volume: volume) }
            }
            // The buses first, the gateway last (depends_on), the rest between.
            func rank(_ name: String) -> Int { buses.contains(name) ? 0 : name == "gateway" ? 2 : 1 }
            let ordered = services.sorted { (rank($0.name), $0.name) < (rank($1.name), $1.name) }
            for service in ordered {
                let volume = service.volumes.first.map { String($0.split(separator: ":")[0]) }
                if let volume {
                    try FileManager.default.createDirectory(atPath: "\(testBus.scratch)/\(volume)", withIntermediateDirectories: true)
                }
                var environment = try mountSecrets(of: service, volume: volume)
                // The production cost of a password hash (600 000 rounds) takes seconds per sign-up in a
                // debug build on a loaded machine: longer than the gateway waits for users.
                if service.name == "users" { environment["RIDE_PASSWORD_ROUNDS"] = "2000" }
                let address = addresses[service.name] ?? "127.0.0.1"
                for instance in 1...(replicas[service.name] ?? 1) {
                    var arguments = service.command.dropFirst().map { local($0, volume: volume, address: address) }
                    if instance > 1, let index = arguments.firstIndex(of: "--http") {
                        arguments[index + 1] = "127.0.0.1:\(try FreePort.next())"
                    }
                    let name = instance == 1 ? "compose-\(service.name)" : "compose-\(service.name)-\(instance)"
                    try testBus.supervisor.start(
                        name: name, executable: "\(Binaries.directory)/\(service.command[0])", arguments: arguments,
                        environment: environment)
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
                    return scaled.allSatisfy { workers($0) >= 2 * Double(defaultWorkerConcurrency) }
                        && tracking.allSatisfy { workers($0) > 0 }
                }
            }
            guard let gatewayPort = ports["8080"].flatMap(Int.init), let gatewayHealth = ports["9106"].flatMap(Int.init) else {
                throw TestFailure("the gateway's ports are not in docker-compose.yml: \(ports)")
            }
            let apps = try await GatewayIntegrationTests.Apps.signUp(TestGateway(port: gatewayPort, statusPort: gatewayHealth))
            let id = try await apps.ride()
            let ride = try await apps.gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body
            #expect(ride["status"] == "COMPLETED" && ride["fare"]?["total_cents"] != nil, "\(ride)")

            // The operators' tool as `docker compose run --rm ridectl status` runs it: through both
            // buses, with the operator's key and nothing else.
            for tool in tools {
                let environment = try mountSecrets(of: tool, volume: nil)
                let arguments = tool.command.dropFirst().map { local($0, volume: nil) }
                let result = try await runCommand(
                    "\(Binaries.directory)/\(tool.command[0])", arguments, environment: environment, inheritEnvironment: false,
                    timeout: .seconds(120))
                #expect(
                    result.status == 0 && result.stdout.contains("bus: ok"), "\(tool.name) \(arguments): \(result.stderr)\(result.stdout)")
                for service in BusContract.Service.all {
                    let row = result.stdout.split(separator: "\n").first { $0.hasPrefix(service + " ") }
                    #expect(row?.hasSuffix("200 up") == true, "\(tool.name) sees \(service)'s workers: \(row ?? "no row")")
                }
            }
            // No plain-TCP path: a client without a key gets no answer from either bus, and a bus
            // started without its keys refuses to listen on every interface.
            for bus in buses {
                let broker = "tcp://\(addresses[bus] ?? ""):\(ports["5557"] ?? "")"
                let plain = try await runCommand(
                    Binaries.ridectl, ["call", "users", "ping", "--broker", broker, "--attempts", "1", "--timeout-ms", "1500"],
                    inheritEnvironment: false)
                #expect(plain.status != 0, "\(bus): a client without a key was answered: \(plain.stdout)")
            }
            let bus = try #require(services.first { $0.command[0] == "ride-bus" })
            let keyless = try await runCommand(
                "\(Binaries.directory)/ride-bus", Array(bus.command.dropFirst()) + ["--check"],
                environment: bus.environment.filter { !$0.key.hasPrefix("RIDE_CURVE") }, inheritEnvironment: false)
            #expect(keyless.status == 64 && keyless.stderr.contains("can be reached from other machines"), "\(keyless.stderr)")
        }
    }
}
