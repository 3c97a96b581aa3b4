import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// A real service process (`ride-users`, `ride-orders`, …) beside a `TestBus`, on a free HTTP
/// port, with its data in the test's directory; ready when /health answers and the broker has
/// its workers.
struct TestService: Sendable {
    let bus: TestBus
    let name: String
    let service: String
    let executable: String
    let arguments: [String]
    let httpPort: Int
    /// Whose data directory: its own, or — for a second instance — the first's.
    var dataOwner: String? = nil
    /// Variables added to the process's environment.
    var environment: [String: String] = [:]

    var dataDirectory: String { "\(bus.dataRoot)/\(dataOwner ?? name)" }
    /// Where it runs (`TestBus.placement`, by the name of its first instance).
    var host: TestHost { bus.host(of: dataOwner ?? name) }
    var log: String { (try? String(contentsOfFile: bus.supervisor.logPath(of: name)!, encoding: .utf8)) ?? "" }

    static func start(on bus: TestBus, service: String, executable: String, arguments: [String] = []) async throws -> TestService {
        let process = TestService(
            bus: bus, name: service, service: service, executable: executable, arguments: arguments, httpPort: try FreePort.next())
        try await process.startProcess()
        return process
    }

    /// Another instance of `service`, on the same data directory (its SQLite files shared).
    func replica(_ instance: Int) async throws -> TestService {
        let process = TestService(
            bus: bus, name: "\(name)-\(instance)", service: service, executable: executable, arguments: arguments,
            httpPort: try FreePort.next(), dataOwner: dataOwner ?? name)
        try await process.startProcess()
        return process
    }

    /// `ride-users` with fast password hashing (the rounds are a setting).
    static func users(on bus: TestBus, arguments: [String] = []) async throws -> TestService {
        try await start(
            on: bus, service: BusContract.Service.users, executable: "ride-users", arguments: ["--password-rounds", "2000"] + arguments)
    }

    static func trips(on bus: TestBus, arguments: [String] = []) async throws -> TestService {
        try await start(on: bus, service: BusContract.Service.trips, executable: "ride-trips", arguments: arguments)
    }

    static func orders(on bus: TestBus, arguments: [String] = []) async throws -> TestService {
        try await start(on: bus, service: BusContract.Service.orders, executable: "ride-orders", arguments: arguments)
    }

    func startProcess() async throws {
        let process = PlatformCommands.service(
            executable, name: name, binDirectory: Binaries.directory, bus: bus.endpoints, http: "\(host.address):\(httpPort)",
            dataDirectory: dataDirectory,
            extra: ["--log-level", "debug"] + arguments)
        // Generous: a process started again mid-load on CI's two cores has taken over 30 s to answer /health.
        let failures = try await bus.supervisor.launch(
            [host.wrap(process)], environment: bus.environment.merging(environment) { _, own in own }, timeout: .seconds(90))
        guard failures.isEmpty else { throw TestFailure("\(failures.joined(separator: "; ")); log:\n\(log)") }
        try await bus.waitForWorkers(service)
    }

    /// One request; the reply's status and JSON.
    func call(_ op: String, _ json: String, timeout: Duration = .seconds(5)) async throws -> (status: Int, body: JSONValue) {
        let client = try await bus.client(timeout: timeout)
        defer { Task { await client.close() } }
        let reply = try await client.callRaw(service, op, json: Array(json.utf8))
        return (reply.status, (try? JSONCoding.decode(JSONValue.self, from: reply.json)) ?? .null)
    }
}
