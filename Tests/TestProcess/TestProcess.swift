import Foundation

/// Runs a program to its end in a test without holding a thread of the cooperative pool: the
/// pool has as many threads as cores (two here), and a blocking `waitUntilExit` in two tests at
/// once stalls every other test of the process — deadlines then fire late and timing tests fail.
/// Output goes to files, not pipes: a server the program starts inherits them and would hold a
/// pipe open.
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
    public static func output(_ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil) async throws -> String {
        let outcome = try await run(program, arguments, in: directory, environment: environment)
        guard outcome.status == 0 else {
            throw Failed(description: "\(program) \(arguments.joined(separator: " ")) exited \(outcome.status): \(outcome.stderr.suffix(2000))")
        }
        return outcome.stdout
    }

    public static func run(
        _ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil
    ) async throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ride-test-process-\(UUID().uuidString)")
        let (outPath, errPath) = (scratch.path + ".out", scratch.path + ".err")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { for path in [outPath, errPath] { try? FileManager.default.removeItem(atPath: path) } }
        let (out, err) = (try FileHandle(forWritingTo: URL(fileURLWithPath: outPath)), try FileHandle(forWritingTo: URL(fileURLWithPath: errPath)))
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try? out.close()
        try? err.close()
        return Outcome(
            status: status, stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
