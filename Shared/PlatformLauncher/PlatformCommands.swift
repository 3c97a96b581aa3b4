/// What a process of the platform is told of the bus: the addresses it connects to.
public struct BusEndpoints: Sendable, Equatable {
    /// Where events are published (the bus's `--pub`).
    public var ingress: String
    /// Where events are subscribed to (the bus's `--sub`).
    public var egress: String
    /// The 7/MDP broker.
    public var broker: String

    public init(ingress: String, egress: String, broker: String) {
        self.ingress = ingress
        self.egress = egress
        self.broker = broker
    }

    /// `--pub … --sub … --broker …`, as every service takes them.
    public var flags: [String] { ["--pub", ingress, "--sub", egress, "--broker", broker] }
}

/// One process of the platform: its name, command line, and the /health that says it is ready.
public struct PlatformProcess: Sendable {
    public var name: String
    public var executable: String
    public var arguments: [String]
    public var healthURL: String

    public init(name: String, executable: String, arguments: [String], healthURL: String) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.healthURL = healthURL
    }
}

/// The command line of each of the platform's executables: the one place that spells their flags.
/// `ridectl up`, the benchmarks and the integration tests all start processes from these (each
/// with its own addresses: fixed ports, or free ones). `http` is the health and metrics listener,
/// `host:port`; `extra` flags come last, so they win.
public enum PlatformCommands {
    /// `ride-bus`, binding `pub`, `sub` and `broker` (several binds comma-separated).
    public static func bus(
        name: String = "bus", binDirectory: String, pub: String, sub: String, broker: String, http: String, extra: [String] = []
    ) -> PlatformProcess {
        process(name, "\(binDirectory)/ride-bus", ["--pub", pub, "--sub", sub, "--broker", broker, "--http", http] + extra, http: http)
    }

    /// `ride-users`, `ride-orders`, `ride-trips` or `ride-notifications`, its SQLite files in `dataDirectory`.
    public static func service(
        _ executable: String, name: String, binDirectory: String, bus: BusEndpoints, http: String, dataDirectory: String,
        extra: [String] = []
    ) -> PlatformProcess {
        process(name, "\(binDirectory)/\(executable)", bus.flags + ["--http", http, "--data-dir", dataDirectory] + extra, http: http)
    }

    /// `ride-tracking`, its device ingest bound on `ingest`; `shard` is `K/N` when it is one of N.
    public static func tracking(
        name: String = "tracking", binDirectory: String, bus: BusEndpoints, http: String, dataDirectory: String, ingest: String,
        shard: String? = nil,
        extra: [String] = []
    ) -> PlatformProcess {
        service(
            "ride-tracking", name: name, binDirectory: binDirectory, bus: bus, http: http, dataDirectory: dataDirectory,
            extra: trackingFlags(ingest: ingest, shard: shard) + extra)
    }

    /// What tracking takes beyond a service's flags.
    public static func trackingFlags(ingest: String, shard: String?) -> [String] {
        ["--ingest", ingest] + (shard.map { ["--shard", $0] } ?? [])
    }

    /// `ride-gateway`, serving the apps on `listen`.
    public static func gateway(
        name: String = "gateway", binDirectory: String, bus: BusEndpoints, http: String, listen: String, extra: [String] = []
    ) -> PlatformProcess {
        process(name, "\(binDirectory)/ride-gateway", bus.flags + ["--listen", listen, "--http", http] + extra, http: http)
    }

    static func process(_ name: String, _ executable: String, _ arguments: [String], http: String) -> PlatformProcess {
        let local = http.hasPrefix("0.0.0.0:") ? "127.0.0.1:" + http.dropFirst(8) : http
        return PlatformProcess(name: name, executable: executable, arguments: arguments, healthURL: "http://\(local)/health")
    }
}

extension ProcessSupervisor {
    /// Starts `processes` together and waits until each one's /health answers (up to `timeout`,
    /// giving up on one at once if it exits, or on all when `keepWaiting` says so). The problems
    /// of those that did not come up, one line each naming the process; empty when all did.
    public func launch(
        _ processes: [PlatformProcess], environment: [String: String] = [:], timeout: Duration = .seconds(30),
        keepWaiting: @escaping @Sendable () -> Bool = { true }
    ) async throws -> [String] {
        for process in processes {
            try start(name: process.name, executable: process.executable, arguments: process.arguments, environment: environment)
        }
        return await withTaskGroup(of: String?.self) { group in
            for process in processes {
                group.addTask {
                    let problem = await healthProblem(
                        process.healthURL, timeout: timeout, stillRunning: { self.isRunning(process.name) && keepWaiting() })
                    guard let problem, keepWaiting() else { return nil }
                    return self.isRunning(process.name)
                        ? "\(process.name) did not become healthy at \(process.healthURL) within \(timeout) (last: \(problem))"
                        : "\(process.name) exited while starting\(self.logPath(of: process.name).map { " (its log: \($0), ending: \(Self.lastLine(of: $0)))" } ?? "")"
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }.sorted()
        }
    }

    /// A log's last line: where a process that stopped says why (for a one-line failure).
    static func lastLine(of path: String) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return String(
            text.split(separator: "\n").last(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty })?.prefix(300) ?? "nothing")
    }
}
