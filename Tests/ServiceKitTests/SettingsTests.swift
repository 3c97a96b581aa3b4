import Foundation
import Logging
import SettingsKit
import Testing

@testable import ServiceKit

@Suite struct SettingsTests {
    @Test func aFlagWinsOverTheEnvironmentWhichWinsOverTheDefault() {
        let env = ["RIDE_X": "from-env"]
        #expect(
            Setting.resolve("from-flag", flag: "x", env: "RIDE_X", default: "d", environment: env)
                == Setting(value: "from-flag", origin: "--x"))
        #expect(
            Setting.resolve(nil, flag: "x", env: "RIDE_X", default: "d", environment: env) == Setting(value: "from-env", origin: "RIDE_X"))
        #expect(Setting.resolve(nil, flag: "x", env: "RIDE_X", default: "d", environment: [:]) == Setting(value: "d", origin: "default"))
        #expect(
            Setting.resolve(nil, flag: "x", env: "RIDE_X", default: "d", environment: ["RIDE_X": ""]).origin == "default",
            "an empty variable is unset")
    }

    @Test func aSettingKeyIsTheOneDeclarationOfItsFlagVariableDefaultAndRange() throws {
        let key = IntegerSettingKey("wait-s", env: "RIDE_WAIT_S", default: 15, range: 1...60, "Seconds to wait")
        #expect(key.help.abstract == "Seconds to wait [env: RIDE_WAIT_S, default: 15]", "the help shows the default that is used")
        #expect(try key.value(nil, environment: [:]) == 15)
        #expect(try key.value(nil, environment: ["RIDE_WAIT_S": "30"]) == 30)
        #expect(try key.value(7, environment: ["RIDE_WAIT_S": "30"]) == 7)
        #expect(throws: ConfigurationError("wait-s (RIDE_WAIT_S) 61 is out of range 1...60")) {
            try key.value(nil, environment: ["RIDE_WAIT_S": "61"])
        }
        #expect(throws: ConfigurationError("wait-s (--wait-s) 0 is out of range 1...60")) { try key.value(0, environment: [:]) }
        let path = SettingKey("key-file", env: "RIDE_KEY_FILE", default: "<data-dir>/x.key", "The key")
        #expect(path.help.abstract == "The key [env: RIDE_KEY_FILE, default: <data-dir>/x.key]")
        #expect(path.resolve(nil, default: "/data/x.key", environment: [:]) == Setting(value: "/data/x.key", origin: "default"))
        #expect(path.resolve(nil, environment: ["RIDE_KEY_FILE": "/k"]) == Setting(value: "/k", origin: "RIDE_KEY_FILE"))
        #expect(SettingKey("secret", env: "RIDE_SECRET", "A secret").resolve(nil, environment: [:]).value == "", "no default: empty")
    }

    @Test func aSecretMayComeFromTheFileItsFileVariableNames() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)").path
        try "s3cret\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = ["RIDE_X_FILE": path]
        #expect(
            try Setting.resolveSecret(nil, flag: "x", env: "RIDE_X", default: "d", environment: file)
                == Setting(value: "s3cret", origin: "RIDE_X_FILE"))
        #expect(
            try Setting.resolveSecret(nil, flag: "x", env: "RIDE_X", default: "d", environment: file.merging(["RIDE_X": "env"]) { $1 })
                .value == "env")
        #expect(try Setting.resolveSecret("flag", flag: "x", env: "RIDE_X", default: "d", environment: file).value == "flag")
        #expect(try Setting.resolveSecret(nil, flag: "x", env: "RIDE_X", default: "d", environment: [:]).origin == "default")
        #expect(throws: ConfigurationError("RIDE_X_FILE: cannot read /nonexistent/secret (a secret mounted as a file?)")) {
            try Setting.resolveSecret(nil, flag: "x", env: "RIDE_X", default: "d", environment: ["RIDE_X_FILE": "/nonexistent/secret"])
        }
        try "\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError("RIDE_X_FILE: \(path) is empty")) {
            try Setting.resolveSecret(nil, flag: "x", env: "RIDE_X", default: "d", environment: file)
        }
    }

    @Test(
        arguments: [
            ("tcp://*:5555", true, nil), ("tcp://127.0.0.1:5555", false, nil), ("tcp://bus:5557", false, nil),
            ("ipc:///tmp/bus", true, nil),
            ("inproc://x", false, nil), ("tcp://*:*", true, nil),
            ("tcp://*:5555", false, "cannot connect to host *"), ("tcp://h:*", false, "cannot connect to port *"),
            ("tcp//x", true, "expected tcp://"), ("tcp://:5", true, "missing HOST"), ("tcp://h", true, "missing :PORT"),
            ("tcp://h:0", true, "port '0' is not a number from 1 to 65535"), ("tcp://h:70000", true, "port '70000'"),
            ("udp://h:1", true, "unknown transport 'udp'"), ("ipc://", true, "expected"),
        ] as [(String, Bool, String?)])
    func endpointSyntax(endpoint: String, binding: Bool, problem: String?) {
        let found = EndpointSyntax.problem(with: endpoint, forBinding: binding)
        if let problem {
            #expect(found?.contains(problem) == true, "\(endpoint): \(found ?? "accepted")")
        } else {
            #expect(found == nil, "\(endpoint): \(found ?? "")")
        }
    }

    @Test func endpointErrorsNameTheSettingAndWhereItCameFrom() {
        #expect(
            throws: ConfigurationError(
                "broker (RIDE_BROKER_BIND) 'tcp//x' is not a ZeroMQ endpoint: expected tcp://HOST:PORT (HOST may be *), ipc://PATH or inproc://NAME"
            )
        ) {
            try EndpointSyntax.validate(Setting(value: "tcp//x", origin: "RIDE_BROKER_BIND"), name: "broker", forBinding: true)
        }
    }

    @Test func endpointListsBindSeveralTransports() throws {
        let setting = Setting(value: "tcp://*:5557, ipc:///run/ride/broker.sock", origin: "--broker")
        #expect(
            try EndpointSyntax.validateList(setting, name: "broker", forBinding: true) == ["tcp://*:5557", "ipc:///run/ride/broker.sock"])
        #expect(throws: ConfigurationError("broker (--broker) 'tcp://*:5557,' must be one or more endpoints separated by commas")) {
            try EndpointSyntax.validateList(Setting(value: "tcp://*:5557,", origin: "--broker"), name: "broker", forBinding: true)
        }
        #expect(throws: ConfigurationError.self) {
            try EndpointSyntax.validateList(
                Setting(value: "ipc:///" + String(repeating: "x", count: 120), origin: "--broker"), name: "broker", forBinding: true)
        }
        #expect(
            throws: ConfigurationError(
                "broker (--broker) 'tcp//x' is not a ZeroMQ endpoint: expected tcp://HOST:PORT (HOST may be *), ipc://PATH or inproc://NAME"
            )
        ) {
            try EndpointSyntax.validateList(Setting(value: "tcp://*:1,tcp//x", origin: "--broker"), name: "broker", forBinding: true)
        }
    }

    @Test func busAddressesNameEveryInstance() throws {
        let setting = Setting(value: "tcp://bus:5557, tcp://bus-2:5557", origin: "RIDE_BROKER")
        #expect(try EndpointSyntax.validateAddress(setting, name: "broker") == "tcp://bus:5557,tcp://bus-2:5557")
        #expect(
            throws: ConfigurationError(
                "broker (--broker) 'tcp://bus:5557,,tcp://bus-2:5557' must be one or more endpoints separated by commas")
        ) {
            try EndpointSyntax.validateAddress(Setting(value: "tcp://bus:5557,,tcp://bus-2:5557", origin: "--broker"), name: "broker")
        }
        #expect(throws: ConfigurationError("broker (--broker) 'tcp://*:5557' is not a ZeroMQ endpoint: cannot connect to host *")) {
            try EndpointSyntax.validateAddress(Setting(value: "tcp://bus:5557,tcp://*:5557", origin: "--broker"), name: "broker")
        }
    }

    @Test func hostPorts() throws {
        #expect(
            try HostPort.parse(Setting(value: "0.0.0.0:9100", origin: "--http"), name: "HTTP address")
                == HostPort(host: "0.0.0.0", port: 9100))
        #expect(
            try HostPort.parse(Setting(value: ":9101", origin: "--http"), name: "HTTP address") == HostPort(host: "0.0.0.0", port: 9101))
        #expect(throws: ConfigurationError.self) { try HostPort.parse(Setting(value: "9100", origin: "--http"), name: "HTTP address") }
        #expect(throws: ConfigurationError.self) { try HostPort.parse(Setting(value: "h:99999", origin: "--http"), name: "HTTP address") }
    }

    @Test func integerSettingsAreCheckedAndRanged() throws {
        #expect(try integerSetting(nil, flag: "hwm", env: "RIDE_HWM", default: 5, range: 0...10, environment: [:]) == 5)
        #expect(try integerSetting(nil, flag: "hwm", env: "RIDE_HWM", default: 5, range: 0...10, environment: ["RIDE_HWM": "7"]) == 7)
        #expect(throws: ConfigurationError("hwm (RIDE_HWM) 'seven' is not a whole number")) {
            try integerSetting(nil, flag: "hwm", env: "RIDE_HWM", default: 5, range: 0...10, environment: ["RIDE_HWM": "seven"])
        }
        #expect(throws: ConfigurationError("hwm (--hwm) 11 is out of range 0...10")) {
            try integerSetting(11, flag: "hwm", env: "RIDE_HWM", default: 5, range: 0...10, environment: [:])
        }
    }
}

@Suite struct LogFormatTests {
    @Test func textLinesAreReadable() {
        let line = RideLogHandler.textLine(
            time: .init(timeIntervalSince1970: 0), level: .warning, label: "ride-bus",
            message: "worker expired", metadata: ["service": "users", "why": "no heartbeat"], colored: false)
        #expect(line == #"1970-01-01T00:00:00.000Z warning ride-bus: worker expired service=users why="no heartbeat""#)
    }

    @Test func jsonLinesAreOneObjectWithEscapedStrings() throws {
        let line = RideLogHandler.jsonLine(
            time: .init(timeIntervalSince1970: 0), level: .info, label: "ride-bus",
            message: "say \"hi\"\nnow", metadata: ["k": "v", "level": "spoof"])
        #expect(line == #"{"time":"1970-01-01T00:00:00.000Z","level":"info","logger":"ride-bus","message":"say \"hi\"\nnow","k":"v"}"#)
    }
}
