import Foundation
import Testing

/// docker-compose.yml as a user brings it up: Docker's own `docker-compose` against a real container
/// engine (podman serving the Docker API, deploy/containers/README.md), under a project name of its
/// own so that a developer's `ridesharing` project is left alone. Containers are read and broken with
/// podman's CLI, as an operator on the host would.
struct ComposeProject: Sendable {
    static let socket = "/run/podman/podman.sock"
    static let root = ComposeTests.root.path

    let name: String

    var environment: [String: String] { ["DOCKER_HOST": "unix://\(Self.socket)", "COMPOSE_PROJECT_NAME": name] }

    /// `docker-compose ARGS` in the repository, as a user types it.
    @discardableResult
    func compose(_ arguments: [String], timeout: Duration = .seconds(300)) async throws -> String {
        let result = try await runCommand(
            ContainerGate.dockerCompose, ["--project-directory", Self.root, "-f", "\(Self.root)/docker-compose.yml"] + arguments,
            environment: environment, timeout: timeout)
        guard result.status == 0 else {
            throw TestFailure("docker-compose \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr.suffix(1500))")
        }
        return result.stdout
    }

    /// `podman ARGS`; its standard output, trimmed.
    @discardableResult
    static func podman(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> String {
        let result = try await runCommand(ContainerGate.podman, arguments, timeout: timeout)
        guard result.status == 0 else {
            throw TestFailure("podman \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr.suffix(800))")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The project's containers (of one service when named), by name, oldest replica first.
    func containers(of service: String? = nil) async throws -> [String] {
        var filters = ["--filter", "label=com.docker.compose.project=\(name)"]
        if let service { filters += ["--filter", "label=com.docker.compose.service=\(service)"] }
        let names = try await Self.podman(["ps", "-a"] + filters + ["--format", "{{.Names}}"])
        // Not the tools' containers (`docker compose run`: <project>_<service>_run_…, or named by --name).
        return names.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "_") && !$0.contains("_run_") }.sorted()
    }

    /// `healthy`, `unhealthy`, `starting`, or "" for a container without a healthcheck.
    static func health(of container: String) async -> String {
        (try? await podman(["inspect", "--format", "{{if .State.Healthcheck}}{{.State.Healthcheck.Status}}{{end}}", container])) ?? "gone"
    }

    static func isRunning(_ container: String) async -> Bool {
        (try? await podman(["inspect", "--format", "{{.State.Running}}", container])) == "true"
    }

    static func pid(of container: String) async throws -> Int32 {
        guard let pid = Int32(try await podman(["inspect", "--format", "{{.State.Pid}}", container])), pid > 0 else {
            throw TestFailure("\(container) has no process")
        }
        return pid
    }

    /// Waits until each container runs and, where it has a healthcheck, is healthy.
    func waitUntilHealthy(_ containers: [String], timeout: Duration = .seconds(120)) async throws {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < timeout {
            var ready = true
            for container in containers {
                let health = await Self.health(of: container)
                if !(await Self.isRunning(container)) || !(health == "" || health == "healthy") {
                    ready = false
                    break
                }
            }
            if ready { return }
            try await Task.sleep(for: .milliseconds(500))
        }
        var report: [String] = []
        for container in containers {
            let health = await Self.health(of: container)
            guard health != "healthy" else { continue }
            report.append("\(container): \(health); its last lines:\n\(await Self.lastLines(of: container))")
        }
        throw TestFailure("not healthy within \(timeout):\n\(report.joined(separator: "\n"))")
    }

    /// A container's last log lines: what a failure shows of a service that would not start.
    static func lastLines(of container: String, count: Int = 15) async -> String {
        ((try? await logLines(of: container, tail: count)) ?? []).map { "    \($0.prefix(300))" }.joined(separator: "\n")
    }

    /// A container's log lines, its processes' standard output and error together (the last `tail`, or all).
    static func logLines(of container: String, tail: Int? = nil) async throws -> [Substring] {
        let result = try await runCommand(ContainerGate.podman, ["logs"] + (tail.map { ["--tail", "\($0)"] } ?? []) + [container])
        return (result.stdout + result.stderr).split(separator: "\n")
    }

    /// The container's process killed with SIGKILL from the host, as a crash or the OOM killer
    /// would: its restart policy brings it back.
    static func crash(_ container: String) async throws -> Int32 {
        let pid = try await pid(of: container)
        guard kill(pid, SIGKILL) == 0 else { throw TestFailure("kill -9 \(pid) (\(container)): errno \(errno)") }
        return pid
    }

    /// deploy/containers/companion for this project, in the background until terminated: what a
    /// Docker engine does by itself and podman 4.3 here does not — the healthchecks (`depends_on:
    /// service_healthy` and the waits above read what it records) and a bridge whose MAC stays put.
    /// One process, started once: this test process starts no others beside its own commands.
    func runCompanion() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(Self.root)/deploy/containers/companion")
        process.arguments = [name]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Whether containers run here: `make test-containers` sets RIDE_TEST_CONTAINERS=1 after its
/// deploy/containers/test made podman ready and built the image.
enum ContainerGate {
    static let podman = "/usr/bin/podman"
    static let dockerCompose = "/usr/bin/docker-compose"
    static let asked = ProcessInfo.processInfo.environment["RIDE_TEST_CONTAINERS"] == "1"
    static var unavailable: String? {
        if !FileManager.default.isExecutableFile(atPath: podman) { return "no podman (deploy/containers/setup installs it)" }
        if !FileManager.default.isExecutableFile(atPath: dockerCompose) { return "no docker-compose (deploy/containers/setup installs it)" }
        if !FileManager.default.fileExists(atPath: ComposeProject.socket) {
            return "no Docker API on \(ComposeProject.socket) (deploy/containers/setup starts it)"
        }
        return nil
    }
    static var runs: Bool { asked && unavailable == nil }
    static var skipped: String {
        asked
            ? "containers cannot run here: \(unavailable ?? "")"
            : "run by `make test-containers` (RIDE_TEST_CONTAINERS=1), after the image is built"
    }
}
