import Foundation
import Testing
import Yams

/// `docker-compose.yml` and `deploy/` stay true without a Docker engine: each service's command and
/// environment are run through the real binary with `--check`, and every executable has a service.
@Suite(.timeLimit(.minutes(2))) struct ComposeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct ComposeService {
        var name: String
        var command: [String]
        var environment: [String: String]
        var ports: [String]
        var healthcheck: [String]?
    }

    static func services() throws -> [ComposeService] {
        let text = try String(contentsOf: root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        guard let document = try Yams.load(yaml: text) as? [String: Any], let services = document["services"] as? [String: Any] else {
            throw TestFailure("docker-compose.yml has no services")
        }
        return try services.keys.sorted().map { name in
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
            return ComposeService(name: name, command: command, environment: environment, ports: ports, healthcheck: healthcheck)
        }
    }

    @Test func everyServiceCommandAndEnvironmentIsAcceptedByTheRealBinary() async throws {
        let services = try Self.services()
        #expect(!services.isEmpty)
        for service in services {
            let executable = "\(Binaries.directory)/\(service.command[0])"
            #expect(FileManager.default.isExecutableFile(atPath: executable), "service \(service.name) runs \(service.command[0]), which the package builds")
            // Only the compose environment, as in a container: nothing inherited from this shell.
            let result = try await runCommand(executable, Array(service.command.dropFirst()) + ["--check"],
                                              environment: service.environment, inheritEnvironment: false)
            #expect(result.status == 0, "service \(service.name): \(result.stderr)")
            #expect(result.stdout.contains("configuration OK"), "service \(service.name): \(result.stdout)")
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
            let flagPorts = Set(service.command.compactMap { argument -> String? in
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
            }
        }
    }

    @Test func theDockerfileBuildsEveryExecutableIntoTheRuntimeImage() throws {
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("FROM swift:6.3"), "build stage on the Swift 6.3 image")
        #expect(dockerfile.contains("libzmq5"), "runtime stage has libzmq5")
        #expect(dockerfile.contains("-name 'ride-*' -o -name ridectl"), "every ride-* executable and ridectl are copied")
        let ignore = try String(contentsOf: Self.root.appendingPathComponent(".dockerignore"), encoding: .utf8)
        #expect(ignore.contains(".build/"))
    }
}
