import Bus
import Foundation
import PlatformLauncher
import Testing
import Wire

/// A process whose output pipe nobody reads any more — `ride-bus | head`, or the children of a
/// `ridectl up` that was killed — gets EPIPE on every write: a service keeps serving and stops
/// cleanly, a ridectl command ends as a filter in a pipeline does.
@Suite(.timeLimit(.minutes(3))) struct ClosedOutputTests {
    /// A pipe whose read end is already closed: every write to `writeEnd` fails with EPIPE.
    static func pipeWithNoReader() throws -> FileHandle {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw TestFailure("pipe: \(String(cString: strerror(errno)))") }
        close(ends[0])
        return FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
    }

    static func waitForExit(_ process: Process, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        return !process.isRunning
    }

    @Test func aServiceLoggingIntoAPipeNobodyReadsKeepsServingAndStopsCleanly() async throws {
        let http = try FreePort.next()
        let bus = Process()
        bus.executableURL = URL(fileURLWithPath: Binaries.rideBus)
        bus.arguments = [
            "--pub", "tcp://127.0.0.1:\(try FreePort.next())", "--sub", "tcp://127.0.0.1:\(try FreePort.next())",
            "--broker", "tcp://127.0.0.1:\(try FreePort.next())", "--http", "127.0.0.1:\(http)", "--log-level", "debug",
        ]
        let output = try Self.pipeWithNoReader()
        bus.standardOutput = output
        bus.standardError = output
        try bus.run()
        try? output.close()
        defer { if bus.isRunning { kill(bus.processIdentifier, SIGKILL) } }
        try await eventually("the bus answers /health although nothing reads its log", timeout: .seconds(60)) {
            (try? await HTTPProbe.get("http://127.0.0.1:\(http)/health"))?.status == 200
        }
        kill(bus.processIdentifier, SIGTERM)  // it logs that it stops: more writes that fail
        #expect(await Self.waitForExit(bus, timeout: .seconds(30)), "the bus stopped within 30 s")
        #expect(
            bus.terminationReason == .exit && bus.terminationStatus == 0,
            "a clean exit, not a crash: \(bus.terminationReason) \(bus.terminationStatus)")
    }

    @Test func ridectlTailEndsOnceNothingReadsItsOutput() async throws {
        try await withTestBus("closed-output") { bus in
            let tail = Process()
            tail.executableURL = URL(fileURLWithPath: Binaries.ridectl)
            tail.arguments = ["tail", "demo."] + bus.ridectlFlags
            let output = try Self.pipeWithNoReader()
            tail.standardOutput = output
            tail.standardError = FileHandle.nullDevice
            try tail.run()
            try? output.close()
            defer { if tail.isRunning { kill(tail.processIdentifier, SIGKILL) } }
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "demo", logger: testLogger)
            var n = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while tail.isRunning && ContinuousClock.now < deadline {
                n += 1
                try publisher.publish(topic: "demo.hello", type: "demo", data: ["n": .number(Double(n))] as JSONValue)
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(!tail.isRunning, "ridectl tail ended")
            #expect(
                tail.terminationReason == .uncaughtSignal && tail.terminationStatus == SIGPIPE,
                "ended by SIGPIPE: \(tail.terminationReason) \(tail.terminationStatus)")
        }
    }
}
