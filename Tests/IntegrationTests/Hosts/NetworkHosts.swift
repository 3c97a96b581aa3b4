import Foundation
import PlatformLauncher
import Synchronization
import TestProcess
import ZeroMQ

/// Where a test process runs: the loopback of this machine, or a host made by `NetworkHosts` —
/// a Linux network namespace with an address of its own on a bridge.
struct TestHost: Sendable, Equatable, CustomStringConvertible {
    var name: String
    /// The address its processes bind and are reached at.
    var address: String
    /// Its network namespace (nil: this machine's own network).
    var namespace: String?

    static let loopback = TestHost(name: "loopback", address: "127.0.0.1", namespace: nil)

    var description: String { namespace.map { "\(name) (\(address), netns \($0))" } ?? name }

    /// The command line that runs `executable` on this host: `ip netns exec` switches the network
    /// namespace and then execs it, so the process's pid and signals stay its own.
    func command(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        let line = launcher + [executable] + arguments
        return (line[0], Array(line.dropFirst()))
    }

    /// What a command line is prefixed with to run on this host.
    var launcher: [String] { namespace.map { [NetworkHosts.ip, "netns", "exec", $0] } ?? [] }

    func wrap(_ process: PlatformProcess) -> PlatformProcess {
        let (executable, arguments) = command(process.executable, process.arguments)
        return PlatformProcess(name: process.name, executable: executable, arguments: arguments, healthURL: process.healthURL)
    }
}

/// Hosts for real on one machine: one network namespace per host, each joined to a bridge by a
/// veth pair, with its own address in a /24 of 10.213.0.0/16 that this set picks (so sets made at
/// once by parallel tests do not meet). The test process stays in the machine's namespace and
/// reaches every host through the bridge. `cut` takes a host off the network and `heal` puts it
/// back; `shape` adds delay and loss between hosts. `remove` deletes
/// everything; a set left by a killed run is removed by the next one (`sweepLeftovers`).
final class NetworkHosts: Sendable {
    static let ip = "/usr/sbin/ip"
    static let tc = "/usr/sbin/tc"
    static let nft = "/usr/sbin/nft"
    /// iptables' own kernel tables, for its NFQUEUE target (nftables' queue statement is not in every kernel).
    static let iptables = "/usr/sbin/iptables-legacy"
    /// Every name this harness makes starts with it (interface names have at most 15 characters).
    static let prefix = "rh"

    let id: String
    let subnet: Int
    let hosts: [TestHost]

    var bridge: String { "\(Self.prefix)b\(id)" }
    /// The root side of host `index`'s veth pair (the host's own side is `eth0` in its namespace).
    func rootLink(_ index: Int) -> String { "\(Self.prefix)\(id)v\(index)" }

    /// Why hosts cannot be made here (not root, no `ip`, namespaces refused), or nil when they can.
    static let unavailable: String? = {
        guard getuid() == 0 else { return "network namespaces need root" }
        guard FileManager.default.isExecutableFile(atPath: ip), FileManager.default.isExecutableFile(atPath: tc) else {
            return "iproute2 (ip, tc) is not installed"
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: ip)
        let name = "\(prefix)probe\(getpid() % 100_000)"
        probe.arguments = ["netns", "add", name]
        probe.standardError = FileHandle.nullDevice
        do { try probe.run() } catch { return "cannot run ip: \(error)" }
        probe.waitUntilExit()  // once per test process, before any test runs
        guard probe.terminationStatus == 0 else { return "ip netns add is refused here (a container without CAP_SYS_ADMIN?)" }
        let remove = Process()
        remove.executableURL = URL(fileURLWithPath: ip)
        remove.arguments = ["netns", "del", name]
        try? remove.run()
        remove.waitUntilExit()
        return nil
    }()

    private init(id: String, subnet: Int, names: [String]) {
        self.id = id
        self.subnet = subnet
        self.hosts = names.enumerated().map { index, name in
            TestHost(name: name, address: "10.213.\(subnet).\(index + 2)", namespace: "\(Self.prefix)-\(id)-\(name)")
        }
    }

    /// Makes one host per name (up to 200), all on one bridge; removes what it made if a step fails.
    static func make(_ names: [String]) async throws -> NetworkHosts {
        await sweepLeftovers()
        let id = String(format: "%04x", UInt16.random(in: 0...UInt16.max))
        let used = try await TestProcess.output(ip, ["-o", "-4", "addr", "show"])
        let subnet = (1...250).shuffled().first { !used.contains("10.213.\($0).") } ?? 1
        let hosts = NetworkHosts(id: id, subnet: subnet, names: names)
        do {
            try await hosts.build()
        } catch {
            await hosts.remove()
            throw error
        }
        return hosts
    }

    private func build() async throws {
        _ = try await TestProcess.output(Self.ip, ["link", "add", bridge, "type", "bridge"])
        _ = try await TestProcess.output(Self.ip, ["addr", "add", "10.213.\(subnet).1/24", "dev", bridge])
        _ = try await TestProcess.output(Self.ip, ["link", "set", bridge, "up"])
        for (index, host) in hosts.enumerated() {
            guard let namespace = host.namespace else { continue }
            let (root, inner) = (rootLink(index), "\(Self.prefix)\(id)i\(index)")
            _ = try await TestProcess.output(Self.ip, ["netns", "add", namespace])
            _ = try await TestProcess.output(Self.ip, ["link", "add", root, "type", "veth", "peer", "name", inner])
            _ = try await TestProcess.output(Self.ip, ["link", "set", inner, "netns", namespace])
            _ = try await TestProcess.output(Self.ip, ["link", "set", root, "master", bridge, "up"])
            for step in [
                ["link", "set", inner, "name", "eth0"], ["addr", "add", "\(host.address)/24", "dev", "eth0"],
                ["link", "set", "eth0", "up"],
                ["link", "set", "lo", "up"], ["route", "add", "default", "via", "10.213.\(subnet).1"],
            ] {
                _ = try await TestProcess.output(Self.ip, ["netns", "exec", namespace, Self.ip] + step)
            }
        }
    }

    subscript(name: String) -> TestHost {
        guard let host = hosts.first(where: { $0.name == name }) else { preconditionFailure("no host \(name) in \(hosts)") }
        return host
    }

    /// Takes `host` off the network: its link to the bridge goes down (connections stall, as when a
    /// cable is pulled or a zone is partitioned), until `heal`.
    func cut(_ host: TestHost) async throws { try await setLink(host, "down") }

    func heal(_ host: TestHost) async throws { try await setLink(host, "up") }

    private func setLink(_ host: TestHost, _ state: String) async throws {
        guard let index = hosts.firstIndex(of: host) else { throw NetworkHostsError("no host \(host) here") }
        _ = try await TestProcess.output(Self.ip, ["link", "set", rootLink(index), state])
    }

    /// Delay and loss between hosts: every packet between two hosts waits `delay` and is lost with
    /// `lossPercent` (tc netem on each host's side). A kernel without netem (CONFIG_NET_SCH_NETEM,
    /// as on some VMs) gets the same from other parts: the loss from nftables on the bridge, one
    /// draw per packet between two hosts, and the delay from a delay line in each host
    /// (`delayline.py`, beside this file), to which an iptables rule hands every packet the host receives.
    /// The delay is taken on arrival: held before the receiver, a packet no longer counts against
    /// its sender's socket, whose small-queue limit would otherwise throttle it to a few packets
    /// per delay. Returns what was applied, for the test's report.
    func shape(delay: Duration, lossPercent: Double) async throws -> String {
        let milliseconds = delay.milliseconds
        var netem = true
        for host in hosts {
            guard let namespace = host.namespace else { continue }
            let outcome = try await TestProcess.run(
                Self.ip,
                [
                    "netns", "exec", namespace, Self.tc, "qdisc", "replace", "dev", "eth0", "root", "netem", "delay", "\(milliseconds)ms",
                    "loss", "\(lossPercent)%",
                ])
            if outcome.status != 0, outcome.stderr.contains("qdisc kind is unknown") {
                netem = false
                break
            }
            guard outcome.status == 0 else { throw NetworkHostsError("tc netem on \(host): \(outcome.stderr.prefix(300))") }
        }
        if netem { return "\(milliseconds) ms of delay and \(lossPercent)% loss on every host's packets (tc netem)" }
        for tool in [Self.nft, Self.iptables] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw NetworkHostsError(
                "no tc netem in this kernel, and no \(tool) to shape the traffic without it (`make test-hosts` installs it)")
        }
        let percent = Int(lossPercent.rounded())
        _ = try await TestProcess.output(Self.nft, ["add", "table", "bridge", table])
        _ = try await TestProcess.output(
            Self.nft, ["add", "chain", "bridge", table, "forward", "{ type filter hook forward priority 0; policy accept; }"])
        _ = try await TestProcess.output(
            Self.nft,
            [
                "add", "rule", "bridge", table, "forward", "iifname", "\(Self.prefix)\(id)v*", "numgen", "random", "mod", "100", "<",
                "\(percent)", "drop",
            ])
        for host in hosts { try await startDelayLine(on: host, milliseconds: milliseconds) }
        return
            "\(milliseconds) ms of delay (a delay line in each host: NFQUEUE) and \(percent)% loss (nftables) between hosts; this kernel has no tc netem"
    }

    /// The nftables table of `shape`'s loss.
    var table: String { "\(Self.prefix)\(id)" }

    /// The delay lines `shape` started, stopped by `remove`.
    private let delayLines = Mutex<[Process]>([])

    private func startDelayLine(on host: TestHost, milliseconds: Int64) async throws {
        guard let namespace = host.namespace else { return }
        _ = try await TestProcess.output(
            Self.ip,
            [
                "netns", "exec", namespace, Self.iptables, "-t", "mangle", "-A", "PREROUTING", "-i", "eth0", "-j", "NFQUEUE", "--queue-num",
                "0", "--queue-bypass",
            ])
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("\(namespace)-delayline.log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let line = Process()
        line.executableURL = URL(fileURLWithPath: Self.ip)
        line.arguments = ["netns", "exec", namespace, "python3", "-u", Binaries.delayLineScript, "0", "\(milliseconds)"]
        line.standardOutput = try FileHandle(forWritingTo: output)
        line.standardError = line.standardOutput
        try line.run()
        delayLines.withLock { $0.append(line) }
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if said.hasPrefix("ready") { return }
            guard line.isRunning, ContinuousClock.now < deadline else {
                throw NetworkHostsError("the delay line on \(host) did not start: \(said.suffix(500))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Deletes the namespaces (their ends of the veth pairs go with them) and the bridge.
    func remove() async {
        for line in delayLines.withLock({ $0 }) where line.isRunning { line.terminate() }
        for host in hosts { if let namespace = host.namespace { _ = try? await TestProcess.run(Self.ip, ["netns", "del", namespace]) } }
        _ = try? await TestProcess.run(Self.ip, ["link", "del", bridge])
        if FileManager.default.isExecutableFile(atPath: Self.nft) {
            _ = try? await TestProcess.run(Self.nft, ["delete", "table", "bridge", table])
        }
    }

    /// Removes namespaces and bridges this harness made in runs that were killed before cleaning up
    /// (older than ten minutes: a parallel test's fresh set stays).
    static func sweepLeftovers() async {
        guard let list = try? await TestProcess.output(ip, ["netns", "list"]) else { return }
        for line in list.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix("\(prefix)-") else { continue }
            let path = "/run/netns/\(name)"
            let created = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            guard Date().timeIntervalSince(created) > 600 else { continue }
            _ = try? await TestProcess.run(ip, ["netns", "del", name])
            let id = name.split(separator: "-").dropFirst().first.map(String.init) ?? ""
            _ = try? await TestProcess.run(ip, ["link", "del", "\(prefix)b\(id)"])
        }
    }
}

struct NetworkHostsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with hosts made for `names`, and removes them afterwards whatever happened.
func withNetworkHosts<T>(_ names: [String], _ body: (NetworkHosts) async throws -> T) async throws -> T {
    let hosts = try await NetworkHosts.make(names)
    do {
        let result = try await body(hosts)
        await hosts.remove()
        return result
    } catch {
        await hosts.remove()
        throw error
    }
}
