import SettingsKit
import Testing

@testable import ServiceKit

/// Secure by default: a bus endpoint other machines reach needs CURVE or `--insecure-bus`.
@Suite struct BusExposureTests {
    @Test(arguments: [
        ("tcp://127.0.0.1:5555", true), ("tcp://127.0.0.2:5557", true), ("tcp://127.255.0.9:1", true), ("tcp://localhost:5557", true),
        ("tcp://[::1]:5557", true), ("tcp://::1:5557", true), ("ipc:///run/ride/broker.sock", true), ("inproc://bus", true),
        ("tcp://10.0.0.1;127.0.0.1:5557", true),
        ("tcp://*:5555", false), ("tcp://0.0.0.0:5555", false), ("tcp://bus:5557", false), ("tcp://bus-0.bus:5557", false),
        ("tcp://10.213.1.2:5557", false), ("tcp://128.0.0.1:5557", false), ("tcp://127.0.0:5557", false),
        ("tcp://127.0.0.1.evil:5557", false),
        ("tcp://eth0:5555", false), ("tcp://lo:5555", false), ("tcp://[::]:5555", false), ("tcp://127.0.0.1;10.0.0.1:5557", false),
        ("udp://127.0.0.1:5555", false),
    ])
    func anEndpointIsLocalOnlyOnTheLoopbackOrAUnixSocket(_ endpoint: String, _ local: Bool) {
        #expect(BusExposure.isLocal(endpoint) == local, "\(endpoint)")
    }

    static let exposed = [
        BusEndpointSetting("event ingress (--pub, RIDE_BUS_PUB)", address: "tcp://127.0.0.1:5555"),
        BusEndpointSetting("broker (--broker, RIDE_BROKER)", address: "ipc:///tmp/b.sock, tcp://bus-2:5557"),
    ]

    @Test func aNonLocalEndpointWithoutCurveIsRefusedSayingWhyAndWhatToDo() throws {
        do {
            try BusExposure.check(Self.exposed, curve: false, insecure: false)
            Issue.record("a plain bus on tcp://bus-2:5557 was allowed")
        } catch let error as ConfigurationError {
            let message = error.message
            #expect(
                message.hasPrefix("the broker (--broker, RIDE_BROKER) tcp://bus-2:5557 can be reached from other machines"), "\(message)")
            for advice in [
                "read every event", "--curve-keys", "RIDE_CURVE_KEYS", "ridectl keys init", "127.0.0.1", "--insecure-bus",
                "RIDE_INSECURE_BUS=1",
            ] {
                #expect(message.contains(advice), "the message says \(advice): \(message)")
            }
        }
        try BusExposure.check(Self.exposed, curve: true, insecure: false)
        try BusExposure.check(Self.exposed, curve: false, insecure: true)
        try BusExposure.check([BusEndpointSetting("device ingest", ["tcp://127.0.0.1:5558", "ipc:///x"])], curve: false, insecure: false)
    }

    @Test func theInsecureFlagOrItsVariableAllowsAPlainBusAndABadValueIsNamed() throws {
        let options = try CommonOptions.parse([])
        #expect(try options.insecureBusAllowed(environment: [:]) == false)
        for value in ["1", "true", "YES"] { #expect(try options.insecureBusAllowed(environment: ["RIDE_INSECURE_BUS": value])) }
        for value in ["0", "false", "no", ""] {
            #expect(try options.insecureBusAllowed(environment: ["RIDE_INSECURE_BUS": value]) == false)
        }
        #expect(throws: ConfigurationError("RIDE_INSECURE_BUS 'sure' must be 1 or 0 (the variable of --insecure-bus)")) {
            try options.insecureBusAllowed(environment: ["RIDE_INSECURE_BUS": "sure"])
        }
        #expect(try CommonOptions.parse(["--insecure-bus"]).insecureBusAllowed(environment: [:]))
    }

    @Test func checkSaysHowTheBusIsSecured() {
        #expect(
            BusExposure.summary([BusEndpointSetting("broker", ["tcp://127.0.0.1:1"])], curve: nil).hasPrefix(
                "none: plain TCP on local addresses only"))
        #expect(BusExposure.summary(Self.exposed, curve: nil).hasPrefix("NONE: plain TCP reachable from other machines"))
    }
}
