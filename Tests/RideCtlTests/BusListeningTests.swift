import PlatformLauncher
import ServiceKit
import SettingsKit
import Testing

@testable import RideCtlKit

/// `ridectl up` (and `make run`): the bus and the device ingest on this machine's loopback unless
/// `--listen-all`, which needs CURVE or `--insecure-bus`; the gateway on every interface.
@Suite struct BusListeningTests {
    /// Every endpoint a process of the platform binds for the bus or the ingest.
    static func busBinds(_ processes: [PlatformProcess]) -> [String] {
        processes.flatMap { process -> [String] in
            // The bus binds its --pub, --sub and --broker; a service connects to them and binds only an --ingest.
            let binding = process.name == "bus" ? ["--pub", "--sub", "--broker"] : ["--ingest"]
            return zip(process.arguments, process.arguments.dropFirst()).filter { binding.contains($0.0) }.flatMap {
                $0.1.split(separator: ",").map(String.init)
            }
        }
    }

    @Test func byDefaultTheBusAndTheIngestListenOnTheLoopbackOnlyAndTheGatewayEverywhere() throws {
        let processes = Platform.processes(binDirectory: "/bin", dataDirectory: "/data", trackingShards: 2)
        let binds = Self.busBinds(processes)
        #expect(binds.count == 8, "pub, sub, broker (each TCP and ipc), two ingests: \(binds)")
        #expect(binds.allSatisfy(BusExposure.isLocal), "\(binds)")
        #expect(binds.contains("tcp://127.0.0.1:5557") && binds.contains("tcp://127.0.0.1:5658"))
        let gateway = try #require(processes.first { $0.name == "gateway" })
        #expect(gateway.arguments.contains("0.0.0.0:8080"), "the apps' door stays open: \(gateway.arguments)")
    }

    @Test func thePlatformsOwnProcessesReachTheBusThroughItsUnixSockets() throws {
        let processes = Platform.processes(binDirectory: "/bin", dataDirectory: "/data")
        let bus = try #require(processes.first { $0.name == "bus" })
        for process in processes where process.name != "bus" && process.arguments.contains("--broker") {
            for flag in ["--pub", "--sub", "--broker"] {
                let value = try #require(
                    process.arguments.firstIndex(of: flag).map { process.arguments[$0 + 1] }, "\(process.name) \(flag)")
                #expect(value.hasPrefix("ipc:///data/"), "\(process.name) \(flag) \(value)")
                let bound = try #require(bus.arguments.firstIndex(of: flag).map { bus.arguments[$0 + 1] })
                #expect(bound.split(separator: ",").contains { $0 == value }, "the bus binds what \(process.name) connects to: \(bound)")
            }
        }
        let long = "/" + String(repeating: "d", count: 90)
        let far = Platform.processes(binDirectory: "/bin", dataDirectory: long)
        #expect(Self.busBinds(far).allSatisfy { !$0.hasPrefix("ipc://") }, "a data directory too deep for a Unix socket: TCP only")
    }

    @Test func listenAllOpensTheBusAndTheIngestOnEveryInterface() {
        let binds = Self.busBinds(Platform.processes(binDirectory: "/bin", dataDirectory: "/data", listen: .everywhere))
        #expect(
            Set(binds.filter { $0.hasPrefix("tcp://") }) == ["tcp://*:5555", "tcp://*:5556", "tcp://*:5557", "tcp://*:5558"], "\(binds)")
        #expect(binds.filter { $0.hasPrefix("ipc://") }.count == 3, "the bus's Unix sockets stay: \(binds)")
    }

    @Test func listenAllNeedsCurveOrInsecureBus() throws {
        let options = try BusListeningOptions.parse([])
        #expect(try options.listening(secure: false, environment: [:]) == .loopback)
        #expect(try options.listening(secure: true, environment: [:]) == .loopback)
        let listenAll = try BusListeningOptions.parse(["--listen-all"])
        #expect(throws: ConfigurationError.self) { try listenAll.listening(secure: false, environment: [:]) }
        #expect(try listenAll.listening(secure: true, environment: [:]) == .everywhere)
        #expect(try listenAll.listening(secure: false, environment: ["RIDE_INSECURE_BUS": "1"]) == .everywhere)
        #expect(
            try BusListeningOptions.parse(["--listen-all", "--insecure-bus"]).listening(secure: false, environment: [:]) == .everywhere)
        #expect(try options.listening(secure: true, environment: ["RIDE_LISTEN_ALL": "1"]) == .everywhere)
        #expect(throws: ConfigurationError("RIDE_LISTEN_ALL 'maybe' must be 1 or 0 (the variable of --listen-all)")) {
            try options.listening(secure: true, environment: ["RIDE_LISTEN_ALL": "maybe"])
        }
        do {
            _ = try BusListeningOptions.parse(["--listen-all"]).listening(secure: false, environment: [:])
        } catch let error as ConfigurationError {
            #expect(error.message.contains("--secure") && error.message.contains("--insecure-bus"), "says what to do: \(error.message)")
        }
    }

    @Test func theBannerSaysWhoReachesTheBus() {
        #expect(BusListening.loopback.banner(keys: nil).contains("127.0.0.1 only, without CURVE"))
        #expect(BusListening.loopback.banner(keys: nil).contains("--listen-all"))
        #expect(BusListening.loopback.banner(keys: "/k").contains("with CURVE"))
        #expect(BusListening.everywhere.banner(keys: nil).contains("WITHOUT CURVE"))
        #expect(BusListening.everywhere.banner(keys: "/k").contains("every interface, with CURVE"))
    }
}
