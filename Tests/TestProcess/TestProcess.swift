import Foundation

/// Runs a program to its end in a test without holding a thread of the cooperative pool: the
/// pool has as many threads as cores (two here), and a blocking `waitUntilExit` in two tests at
/// once stalls every other test of the process — deadlines then fire late and timing tests fail.
/// Output goes to files, not pipes: a server the program starts (or any process spawned at the same
/// instant) inherits them and would hold a pipe open; the end is learnt from `ChildExit`.
public enum TestProcess {
    public struct Outcome: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// A program that exited with another status than 0, and what it said.
    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs the program and returns its standard output; throws `Failed` (quoting its standard
    /// error) unless it exits 0.
    public static func output(_ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil)
        async throws -> String
    {
        let outcome = try await run(program, arguments, in: directory, environment: environment)
        guard outcome.status == 0 else {
            throw Failed(
                description: "\(program) \(arguments.joined(separator: " ")) exited \(outcome.status): \(outcome.stderr.suffix(2000))")
        }
        return outcome.stdout
    }

    /// A program still running after `timeout`, killed.
    public struct TimedOut: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs the program with `stdin` as its standard input; after `timeout` it is killed and
    /// `TimedOut` thrown, as when the task is cancelled (then with `CancellationError`).
    public static func run(
        _ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
        stdin: String? = nil, timeout: Duration? = nil
    ) async throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ride-test-process-\(UUID().uuidString)")
        let (outPath, errPath, inPath) = (scratch.path + ".out", scratch.path + ".err", scratch.path + ".in")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        _ = FileManager.default.createFile(atPath: inPath, contents: Data((stdin ?? "").utf8))
        defer { for path in [outPath, errPath, inPath] { try? FileManager.default.removeItem(atPath: path) } }
        let (out, err) = (
            try FileHandle(forWritingTo: URL(fileURLWithPath: outPath)), try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        )
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        defer { for handle in [out, err, input] { try? handle.close() } }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let status = ChildExit.status(of: process) {
                return Outcome(
                    status: status, stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                    stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
            }
            if let deadline, let timeout, ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                throw TimedOut(description: "\(program) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
            }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                kill(process.processIdentifier, SIGKILL)  // cancelled: the program goes with the task
                throw error
            }
        }
    }
}
