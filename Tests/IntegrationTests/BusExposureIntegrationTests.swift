import Foundation
import ServiceKit
import Testing

/// Secure by default, through the real binaries: every process refuses a bus address other
/// machines reach (a wildcard bind, another host) while CURVE is off, exits 64 and says why and
/// what to do; CURVE keys or `--insecure-bus` (on purpose) let it start; local addresses need neither.
@Suite(.timeLimit(.minutes(4))) struct BusExposureIntegrationTests {
    /// Each executable with a bus address that leaves this machine, and the setting the refusal names.
    static let exposed: [(executable: String, arguments: [String], environment: [String: String], setting: String)] = [
        ("ride-bus", ["--broker", "tcp://*:5557"], [:], "broker (--broker, RIDE_BROKER_BIND) tcp://*:5557"),
        ("ride-bus", [], ["RIDE_BUS_PUB_BIND": "tcp://0.0.0.0:5555"], "event ingress (--pub, RIDE_BUS_PUB_BIND) tcp://0.0.0.0:5555"),
        ("ride-users", [], ["RIDE_BROKER": "tcp://127.0.0.1:5557,tcp://bus-2:5557"], "broker (--broker, RIDE_BROKER) tcp://bus-2:5557"),
        ("ride-orders", [], ["RIDE_BUS_PUB": "tcp://bus:5555"], "event ingress (--pub, RIDE_BUS_PUB) tcp://bus:5555"),
        ("ride-trips", ["--sub", "tcp://10.0.0.7:5556"], [:], "event egress (--sub, RIDE_BUS_SUB) tcp://10.0.0.7:5556"),
        ("ride-notifications", [], ["RIDE_BROKER": "tcp://bus:5557"], "broker (--broker, RIDE_BROKER) tcp://bus:5557"),
        ("ride-tracking", ["--ingest", "tcp://*:5558"], [:], "device ingest (--ingest, RIDE_TRACKING_INGEST_BIND) tcp://*:5558"),
        ("ride-gateway", [], ["RIDE_BUS_SUB": "tcp://bus:5556"], "event egress (--sub, RIDE_BUS_SUB) tcp://bus:5556"),
    ]

    /// Not only `--check`: the process itself refuses to start, before it binds or connects anything.
    @Test func everyProcessRefusesToStartOnANonLocalBusWithoutCurveAndSaysWhy() async throws {
        for (executable, arguments, environment, setting) in Self.exposed {
            let result = try await runCommand(
                "\(Binaries.directory)/\(executable)", arguments, environment: environment, timeout: .seconds(120))
            #expect(result.status == 64, "\(executable) \(arguments) \(environment): \(result.stderr)")
            #expect(
                result.stderr.contains("the \(setting) can be reached from other machines, and the bus is not secured"),
                "\(executable): \(result.stderr)")
            for advice in ["--curve-keys", "ridectl keys init", "--insecure-bus"] {
                #expect(result.stderr.contains(advice), "\(executable) says \(advice): \(result.stderr)")
            }
        }
    }

    @Test func curveKeysOrInsecureBusOnPurposeLetItStart() async throws {
        let keys = try makeScratchDirectory("exposure-keys") + "/keys"
        _ = try CurveKeyDirectory.create(at: keys)
        for (executable, arguments, environment, _) in Self.exposed {
            let path = "\(Binaries.directory)/\(executable)"
            let secured = try await runCommand(
                path, arguments + ["--check"], environment: environment.merging(["RIDE_CURVE_KEYS": keys]) { $1 }, timeout: .seconds(120))
            #expect(
                secured.status == 0 && secured.stdout.contains("bus security          CURVE"),
                "\(executable): \(secured.stderr)\(secured.stdout)")
            let insecure = try await runCommand(
                path, arguments + ["--check", "--insecure-bus"], environment: environment, timeout: .seconds(120))
            #expect(
                insecure.status == 0 && insecure.stdout.contains("NONE: plain TCP reachable from other machines"),
                "\(executable): \(insecure.stderr)")
            let variable = try await runCommand(
                path, arguments + ["--check"], environment: environment.merging(["RIDE_INSECURE_BUS": "1"]) { $1 }, timeout: .seconds(120))
            #expect(variable.status == 0, "\(executable) with RIDE_INSECURE_BUS=1: \(variable.stderr)")
        }
    }

    /// The defaults are this machine's: `ride-bus` and `ride-tracking` bind the loopback, the
    /// services connect to it, and none needs keys or `--insecure-bus`.
    @Test(arguments: ["ride-bus", "ride-users", "ride-orders", "ride-trips", "ride-notifications", "ride-tracking", "ride-gateway"])
    func theDefaultsAreLocalAndNeedNeither(executable: String) async throws {
        let result = try await runCommand(
            "\(Binaries.directory)/\(executable)", ["--check"], environment: ["RIDE_INSECURE_BUS": ""], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("bus security          none: plain TCP on local addresses only"), "\(result.stdout)")
    }
}
