import Foundation

/// Runs an external program to its end without holding a thread of the cooperative pool. Its
/// output goes to a file (not a pipe, which a full buffer would block) and is quoted on failure.
public enum ToolRun {
    public static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil, what: String)
        async throws(ToolRunError)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("ride-tool-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let status: Int32
        do {
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
            defer { try? output.close() }
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle.nullDevice
            status = try await withCheckedThrowingContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do { try process.run() } catch { continuation.resume(throwing: error) }
            }
        } catch {
            throw ToolRunError("\(what) failed: cannot run \(program): \(error)")
        }
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            // The end of the output is where a tool says what went wrong.
            throw ToolRunError("\(what) failed (exit \(status)): \(text.suffix(1500).trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}

/// A program that could not be run or failed; the message says which, and quotes its output's end.
public struct ToolRunError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension ToolRun {
    /// `name` on `searchPath`, or an error saying which package installs it.
    public static func find(_ name: String, package: String, searchPath: [String] = defaultSearchPath) throws(ToolRunError) -> String {
        guard let path = searchPath.map({ "\($0)/\(name)" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw ToolRunError("\(name) is not installed (apt-get install \(package))")
        }
        return path
    }

    public static var defaultSearchPath: [String] {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
    }
}
