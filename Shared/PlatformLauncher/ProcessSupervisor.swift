import Foundation
import SettingsKit
import Synchronization

/// Starts platform executables as child processes, routes their output, signals and stops them.
/// Used by `ridectl up`, `ridectl bench` and the integration tests.
///
/// Nothing is restarted behind anyone's back: when a child exits on its own, `nextExit()` reports
/// it and the caller decides. Children still running when the supervisor goes away, or when the
/// process exits normally, get SIGKILL — a failed test never leaves a process holding a port.
public final class ProcessSupervisor: Sendable {
    public enum OutputMode: Sendable {
        /// Each line as `name | line` on our standard output, coloured per name when wanted.
        case prefixed(colored: Bool)
        /// Each child's output in `<directory>/<name>.log`.
        case files(directory: String)
    }

    public struct Exit: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        /// The exit status, or the signal's number when `signaled`.
        public var status: Int32
        public var signaled: Bool
        /// Whether the child was asked to stop (by `stop`, `stopAll` or `signal`).
        public var expected: Bool

        public var description: String {
            signaled
                ? "\(name) was killed by signal \(status)\(status == SIGKILL ? " (SIGKILL)" : "")" : "\(name) exited with status \(status)"
        }
    }

    private struct State {
        var children: [String: Process] = [:]
        var asked: Set<String> = []
        var exits: [Exit] = []
        var lastStatus: [String: Int32] = [:]
        var waiters: [CheckedContinuation<Exit, Never>] = []
    }

    private let state = Mutex(State())
    /// Held while a pipe is made close-on-exec and while a child is spawned, by every supervisor.
    private static let spawning = Mutex(())
    private let output: OutputMode

    public init(output: OutputMode) {
        self.output = output
        LiveSupervisors.shared.add(self)
    }

    deinit { killAll() }

    /// Starts `executable` as `name` (a name may be reused once its previous process has exited).
    public func start(name: String, executable: String, arguments: [String], environment: [String: String] = [:]) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ConfigurationError("\(executable) is not an executable (build with `swift build`, or pass --bin-dir)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        var parentsWriteEnd: FileHandle?
        switch output {
        case .prefixed(let colored):
            // Not Foundation's Pipe: its descriptors are inherited by every child spawned meanwhile
            // on another thread (Process closes only the descriptors open when it looked), and a
            // sibling holding this pipe's read end keeps it open after we are gone — an orphaned
            // child then blocks writing its log. Close-on-exec descriptors reach only this child
            // (as its stdout and stderr, which dup2 makes inheritable).
            // (pipe2 is not in Swift's Glibc; `spawning` keeps our own spawns out of the gap
            // between pipe and fcntl.)
            var ends: [Int32] = [-1, -1]
            guard
                Self.spawning.withLock({ _ in
                    pipe(&ends) == 0 && fcntl(ends[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0
                })
            else {
                throw ConfigurationError("cannot make a pipe for \(name)'s output: \(String(cString: strerror(errno)))")
            }
            let writeEnd = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
            process.standardOutput = writeEnd
            process.standardError = writeEnd
            parentsWriteEnd = writeEnd
            let prefix = name.padding(toLength: max(13, name.count + 1), withPad: " ", startingAt: 0) + "| "
            Self.forwardLines(
                of: FileHandle(fileDescriptor: ends[0], closeOnDealloc: true), prefix: colored ? ANSI.colorFor(name, prefix) : prefix)
        case .files(let directory):
            let path = "\(directory)/\(name).log"
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let handle = FileHandle(forWritingAtPath: path)
            handle?.seekToEndOfFile()
            process.standardOutput = handle
            process.standardError = handle
        }
        process.terminationHandler = { [weak self] finished in
            self?.record(
                name: name, process: finished, status: finished.terminationStatus, signaled: finished.terminationReason == .uncaughtSignal)
        }
        // Registered before it runs, so that even an exit at once finds it here (`record`).
        state.withLock { state in
            state.asked.remove(name)
            state.children[name] = process
        }
        // The child has its own copy; ours would keep the pipe open (no end of file) after it exits.
        defer { try? parentsWriteEnd?.close() }
        do {
            try Self.spawning.withLock { _ in try process.run() }
        } catch {
            state.withLock { state in if state.children[name] === process { state.children[name] = nil } }
            throw error
        }
    }

    private static func forwardLines(of readEnd: FileHandle, prefix: String) {
        let pending = Mutex<[UInt8]>([])
        // The handler holds the read end alive (nothing else does; closing it would kill the child
        // with SIGPIPE) until the end of file, where dropping the handler ends that cycle.
        readEnd.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                readEnd.readabilityHandler = nil
                return
            }
            let lines = pending.withLock { buffer -> String in
                buffer.append(contentsOf: chunk)
                var text = ""
                while let newline = buffer.firstIndex(of: 0x0A) {
                    text += prefix + String(decoding: buffer[..<newline], as: UTF8.self) + "\n"
                    buffer.removeSubrange(...newline)
                }
                return text
            }
            if !lines.isEmpty { StandardStream.output.write(lines) }
        }
    }

    private func record(name: String, process: Process, status: Int32, signaled: Bool) {
        let (exit, waiters) = state.withLock { state -> (Exit, [CheckedContinuation<Exit, Never>]) in
            // A killed process's exit may be seen only after the name was started again (a loaded
            // machine reaps late): that exit must not take the new process's place.
            let replaced = state.children[name] !== process
            if !replaced { state.children[name] = nil }
            state.lastStatus[name] = status
            let exit = Exit(name: name, status: status, signaled: signaled, expected: replaced || state.asked.contains(name))
            defer { state.waiters = [] }
            if state.waiters.isEmpty { state.exits.append(exit) }
            return (exit, state.waiters)
        }
        for waiter in waiters { waiter.resume(returning: exit) }
    }

    /// The next child to exit (or the oldest exit nobody has taken yet).
    public func nextExit() async -> Exit {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Exit? in
                if !state.exits.isEmpty { return state.exits.removeFirst() }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    public var runningNames: [String] { state.withLock { $0.children.keys.sorted() } }

    public func pid(of name: String) -> Int32? { state.withLock { $0.children[name]?.processIdentifier } }

    public func isRunning(_ name: String) -> Bool { pid(of: name) != nil }

    /// Where `name`'s output goes, in `.files` mode.
    public func logPath(of name: String) -> String? {
        if case .files(let directory) = output { return "\(directory)/\(name).log" }
        return nil
    }

    /// Sends `signal` (SIGKILL, SIGSTOP, SIGCONT, …) to `name`.
    public func signal(_ name: String, _ signal: Int32) {
        let pid = state.withLock { state -> Int32? in
            if signal == SIGKILL || signal == SIGTERM || signal == SIGINT { state.asked.insert(name) }
            return state.children[name]?.processIdentifier
        }
        // 0 (a child not yet spawned) would signal our whole process group.
        if let pid, pid > 0 { kill(pid, signal) }
    }

    /// Waits for `name` to exit, up to `timeout`; its exit status, or nil if it is still running.
    public func waitForExit(_ name: String, timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = state.withLock({ $0.children[name] == nil ? $0.lastStatus[name] : nil }) { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// SIGTERM to `name`, then SIGKILL if it is still running after `grace`; its exit status.
    @discardableResult
    public func stop(_ name: String, grace: Duration = .seconds(10)) async -> Int32? {
        signal(name, SIGTERM)
        if let status = await waitForExit(name, timeout: grace) { return status }
        signal(name, SIGKILL)
        return await waitForExit(name, timeout: .seconds(5))
    }

    /// SIGTERM to every child, then SIGKILL to those still running after `grace`.
    public func stopAll(grace: Duration = .seconds(10)) async {
        for name in runningNames { signal(name, SIGTERM) }
        let deadline = ContinuousClock.now + grace
        while ContinuousClock.now < deadline, !runningNames.isEmpty {
            try? await Task.sleep(for: .milliseconds(20))
        }
        killAll()
        while !runningNames.isEmpty { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// SIGKILL to every child, now (teardown after a failure).
    public func killAll() {
        let pids = state.withLock { state in
            state.asked.formUnion(state.children.keys)
            return state.children.values.map(\.processIdentifier)
        }
        for pid in pids where pid > 0 { kill(pid, SIGKILL) }
    }
}

/// Every supervisor alive, so children are killed when the process exits normally (e.g. a test
/// runner that ends while a test's supervisor is still around).
private final class LiveSupervisors: Sendable {
    static let shared: LiveSupervisors = {
        atexit { LiveSupervisors.shared.killAll() }
        return LiveSupervisors()
    }()

    private struct Weak: @unchecked Sendable {
        // Only read under the mutex below; the supervisor itself is Sendable.
        weak var supervisor: ProcessSupervisor?
    }
    private let all = Mutex<[Weak]>([])

    func add(_ supervisor: ProcessSupervisor) {
        all.withLock { list in
            list.removeAll { $0.supervisor == nil }
            list.append(Weak(supervisor: supervisor))
        }
    }

    func killAll() {
        for entry in all.withLock({ $0 }) { entry.supervisor?.killAll() }
    }
}

/// Where the platform's executables are: `flag`, else `RIDE_BIN_DIR`, else next to this program.
public func binaryDirectory(_ flag: String?) -> String {
    if let flag { return flag }
    if let env = ProcessInfo.processInfo.environment["RIDE_BIN_DIR"], !env.isEmpty { return env }
    let arg0 = CommandLine.arguments[0]
    if arg0.contains("/") { return URL(fileURLWithPath: arg0).resolvingSymlinksInPath().deletingLastPathComponent().path }
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    where FileManager.default.isExecutableFile(atPath: "\(dir)/\(arg0)") {
        return String(dir)
    }
    return "."
}

/// Waits until `url` answers 200, up to `timeout`, and gives up at once when `stillRunning` says the
/// process behind it is gone. Readiness is asked for, never slept for.
public func waitUntilHealthy(_ url: String, timeout: Duration, stillRunning: @Sendable () -> Bool = { true }) async -> Bool {
    await healthProblem(url, timeout: timeout, stillRunning: stillRunning) == nil
}

/// `waitUntilHealthy`, telling why not: nil once `url` answers 200, else the last answer or error
/// seen (for a message that says more than "not healthy").
public func healthProblem(_ url: String, timeout: Duration, stillRunning: @Sendable () -> Bool = { true }) async -> String? {
    let deadline = ContinuousClock.now + timeout
    var problem = "no answer"
    var attempts = 0
    while ContinuousClock.now < deadline, stillRunning() {
        attempts += 1
        do {
            let response = try await HTTPProbe.get(url, timeout: .milliseconds(500))
            if response.status == 200 { return nil }
            problem = "answered \(response.status): \(response.text.prefix(200))"
        } catch {
            problem = "\(error)"
        }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return "\(problem) (\(attempts) attempts)"
}
