import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SettingsKit

/// Exit codes of every executable (sysexits(3)).
public enum ExitCodes {
    /// A flag or environment variable is malformed (ArgumentParser's validation code).
    public static let usage: Int32 = 64
    /// An address could not be bound (in use, or not ours).
    public static let unavailable: Int32 = 69
    /// Something failed at run time.
    public static let software: Int32 = 70
}

/// Prints `<program>: error: <message>` on standard error and ends with `code`.
public func exitWithError(_ message: String, program: String, code: Int32) -> ExitCode {
    StandardStream.error.write("\(program): error: \(message)\n")
    return ExitCode(code)
}

/// Runs a process's services until SIGTERM or SIGINT, then shuts them down gracefully in reverse
/// order (a second signal cancels).
public enum ServiceRunner {
    public static func run(_ services: [any Service], logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [],
                logger: logger))
        try await group.run()
    }
}

/// A `Service` that starts nothing: it waits for graceful shutdown, then runs `onShutdown`.
/// Socket loops that are started (and bound) before the group runs use it to stop with the group.
public struct ShutdownHook: Service {
    let onShutdown: @Sendable () async -> Void

    public init(_ onShutdown: @escaping @Sendable () async -> Void) { self.onShutdown = onShutdown }

    public func run() async throws {
        try? await gracefulShutdown()
        await onShutdown()
    }
}

/// Whether `error` (from NIO or libzmq) says an address is already in use.
public func isAddressInUse(_ error: any Error) -> Bool {
    let text = "\(error)"
    return text.contains("Address already in use") || text.contains("EADDRINUSE") || text.contains("errno: 98")
}
