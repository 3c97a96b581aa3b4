import ArgumentParser
import Foundation
import PlatformLauncher
import ServiceKit

struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask one process's /health; exit 0 when it answers 200 (for container health checks).",
        discussion: """
            Example (docker-compose.yml): test: ["CMD", "ridectl", "health", "http://127.0.0.1:9100/health"]
            """)

    @Argument(help: "The URL of a /health endpoint.") var url: String
    @Option(name: .customLong("timeout-ms"), help: "How long to wait for the answer.") var timeoutMilliseconds = 2000

    func run() async throws {
        do {
            let response = try await HTTPProbe.get(url, timeout: .milliseconds(timeoutMilliseconds))
            Output.out(response.text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n")
            if response.status != 200 { throw ExitCode(1) }
        } catch let error as HTTPProbe.ProbeError {
            Output.err("ridectl health: \(error)\n")
            throw ExitCode(1)
        }
    }
}
