import Foundation
import Testing

/// Every stateful service opens its store the one way (`StorageLocation.open`): a store it cannot
/// open stops it with exit 70 and a message naming the file or the database (here a SQLite file
/// where no folder can be made; an unreachable PostgreSQL ends the same way, once PostgresNIO's
/// pool gives up connecting, about a minute later).
@Suite struct StoreOpeningTests {
    static let services = ["ride-users", "ride-orders", "ride-trips", "ride-tracking", "ride-notifications"]

    @Test(arguments: services) func aStoreThatCannotOpenStopsTheServiceNamingIt(_ service: String) async throws {
        let executable = "\(Binaries.directory)/\(service)"
        let nowhere = try await runCommand(executable, ["--data-dir", "/proc/nowhere", "--http", "127.0.0.1:0"], timeout: .seconds(45))
        #expect(nowhere.status == 70, "\(service): \(nowhere.stderr.suffix(400))")
        #expect(nowhere.stderr.contains("cannot open the database (SQLite /proc/nowhere/"))
    }
}
