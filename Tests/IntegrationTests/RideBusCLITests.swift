import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// `ride-bus` as an operator meets it: --help, bad flags, taken ports, signals.
@Suite(.timeLimit(.minutes(2))) struct RideBusCLITests {
    @Test func helpExplainsEveryFlagAndItsEnvironmentVariable() async throws {
        let (status, out, _) = try await runCommand(Binaries.rideBus, ["--help"])
        #expect(status == 0)
        for text in [
            "--pub", "RIDE_BUS_PUB_BIND", "--sub", "RIDE_BUS_SUB_BIND", "--broker", "RIDE_BROKER_BIND", "--http", "RIDE_HTTP_ADDR",
            "RIDE_LOG_FORMAT", "RIDE_LOG_LEVEL", "--hwm", "RIDE_BUS_HWM", "--heartbeat-ms", "--check", "Exit codes",
        ] {
            #expect(out.contains(text), "help mentions \(text)")
        }
    }

    @Test(arguments: [
        (["--pub", "tcp//x"], [String: String](), "event ingress (--pub) 'tcp//x' is not a ZeroMQ endpoint"),
        (["--broker", "tcp://*:99999"], [:], "port '99999' is not a number from 1 to 65535"),
        (["--sub", "udp://*:5"], [:], "unknown transport 'udp'"),
        ([], ["RIDE_BUS_HWM": "lots"], "hwm (RIDE_BUS_HWM) 'lots' is not a whole number"),
        ([], ["RIDE_LOG_FORMAT": "xml"], "log format (RIDE_LOG_FORMAT) 'xml' must be text or json"),
        (["--http", "nonsense"], [:], "HTTP address (--http) 'nonsense' must be HOST:PORT"),
        (["--liveness", "0"], [:], "liveness (--liveness) 0 is out of range"),
    ])
    func malformedSettingsExit64NamingTheSetting(arguments: [String], environment: [String: String], message: String) async throws {
        let (status, _, err) = try await runCommand(Binaries.rideBus, arguments, environment: environment)
        #expect(status == 64)
        #expect(err.contains(message), "\(err)")
    }

    @Test func checkPrintsTheResolvedConfigurationAndExits() async throws {
        // Every interface without CURVE on purpose (else refused: BusExposureIntegrationTests).
        let (status, out, _) = try await runCommand(
            Binaries.rideBus, ["--check", "--broker", "tcp://*:6000", "--insecure-bus"],
            environment: ["RIDE_BUS_PUB_BIND": "tcp://127.0.0.1:6001"])
        #expect(status == 0)
        #expect(out.contains("tcp://127.0.0.1:6001"))
        #expect(out.contains("tcp://*:6000"))
    }

    @Test func aTakenPortIsOneClearLineAndExit69() async throws {
        try await withTestBus("taken") { bus in
            let (status, _, err) = try await runCommand(
                Binaries.rideBus,
                [
                    "--pub", bus.ingress, "--sub", "tcp://127.0.0.1:\(try FreePort.next())",
                    "--broker", "tcp://127.0.0.1:\(try FreePort.next())", "--http", "127.0.0.1:\(try FreePort.next())",
                ])
            #expect(status == 69)
            #expect(err == "ride-bus: error: cannot bind event ingress (--pub) to \(bus.ingress): Address already in use\n")
            let (httpStatus, _, httpErr) = try await runCommand(
                Binaries.rideBus,
                [
                    "--pub", "tcp://127.0.0.1:\(try FreePort.next())", "--sub", "tcp://127.0.0.1:\(try FreePort.next())",
                    "--broker", "tcp://127.0.0.1:\(try FreePort.next())", "--http", "127.0.0.1:\(bus.httpPort)",
                ])
            #expect(httpStatus == 69)
            #expect(
                httpErr.contains("cannot listen on HTTP address 127.0.0.1:\(bus.httpPort) (--http): Address already in use"), "\(httpErr)")
        }
    }

    @Test func sigtermShutsDownGracefully() async throws {
        let bus = try await TestBus.start("sigterm")
        bus.supervisor.signal("bus", SIGTERM)
        // Gracefully is promptly (under a second here), with room for a machine the suite keeps busy.
        let status = await bus.supervisor.waitForExit("bus", timeout: .seconds(20))
        #expect(status == 0, "\(bus.log.suffix(2000))")
        #expect(bus.log.contains("bus stopped"))
        await bus.stop()
    }

    @Test func jsonLogsAreOneObjectPerLine() async throws {
        let scratch = try makeScratchDirectory("jsonlog")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        let http = try FreePort.next()
        try supervisor.start(
            name: "bus", executable: Binaries.rideBus,
            arguments: [
                "--pub", "tcp://127.0.0.1:\(try FreePort.next())", "--sub", "tcp://127.0.0.1:\(try FreePort.next())",
                "--broker", "tcp://127.0.0.1:\(try FreePort.next())", "--http", "127.0.0.1:\(http)",
            ], environment: ["RIDE_LOG_FORMAT": "json"])
        let log = supervisor.logPath(of: "bus")!
        #expect(
            await waitUntilHealthy("http://127.0.0.1:\(http)/health", timeout: .seconds(20)),
            "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        await supervisor.stopAll()
        let lines = try String(contentsOfFile: supervisor.logPath(of: "bus")!, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 2)
        for line in lines {
            let object = try JSONCoding.decode(JSONValue.self, from: Array(line.utf8))
            #expect(object["level"] != nil && object["message"] != nil && object["time"] != nil, "\(line)")
        }
        #expect(lines.contains { $0.contains(#""message":"bus ready""#) })
        try? FileManager.default.removeItem(atPath: scratch)
    }

    @Test func metricsAreServedInPrometheusFormat() async throws {
        try await withTestBus("metrics") { bus in
            let response = try await HTTPProbe.get(bus.metricsURL)
            #expect(response.status == 200)
            for name in ["ride_bus_events_forwarded_total", "ride_bus_requests_total", "process_resident_memory_bytes"] {
                #expect(response.text.contains("# TYPE \(name)"), "\(name) exported")
            }
        }
    }
}
