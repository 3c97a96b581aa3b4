import ArgumentParser
import Bus
import Foundation
import Logging
import ServiceKit
import ZeroMQ

/// `ridectl bench-proxy`: libzmq's plain `zmq_proxy` between XSUB and XPUB — the baseline that
/// `ride-bus` is measured against. Hidden: `ridectl bench bus` starts it.
struct BenchProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-proxy", abstract: "Run libzmq's zmq_proxy between XSUB and XPUB (benchmark baseline).",
        shouldDisplay: false)

    @Option(help: "XSUB endpoint to bind.") var pub: String
    @Option(help: "XPUB endpoint to bind.") var sub: String
    @Option(help: "High-water mark of both sockets.") var hwm: Int32 = 100_000

    func run() throws {
        let xsub = try Socket(.xsub)
        let xpub = try Socket(.xpub)
        try xsub.setReceiveHighWaterMark(hwm)
        try xpub.setSendHighWaterMark(hwm)
        try xsub.bind(pub)
        try xpub.bind(sub)
        try xsub.runProxy(to: xpub)
    }
}

/// `ridectl echo-worker`: an echo service on the broker, with the same typed layer and worker as
/// every platform service. Hidden: `ridectl bench bus` and the integration tests start it.
struct EchoWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-worker", abstract: "Serve an echo op on the broker (benchmarks and tests).", shouldDisplay: false)

    @Option(help: "Broker endpoint.") var broker: String
    @Option(help: "Service name to register.") var service = "bench-echo"
    @Option(help: "MDP connections (requests in progress at once).") var concurrency = 32
    @Option(name: .customLong("heartbeat-ms"), help: "MDP heartbeat interval.") var heartbeatMilliseconds = 2500
    @OptionGroup var curve: CurveOptions

    struct EchoParams: Codable, Sendable { var text: String }

    func run() async throws {
        try await curve.secureRidectl()
        var router = OpRouter(service: service)
        router.on("echo") { (params: EchoParams, _) in params }
        var options = MDPWorker.Options()
        options.concurrency = concurrency
        options.heartbeatInterval = .milliseconds(heartbeatMilliseconds)
        let worker = ServiceWorker(broker: broker, router: router, options: options, logger: CLILogging.logger)
        try await ServiceRunner.run([worker], logger: CLILogging.logger)
    }
}

/// Percentiles of a sample, nearest-rank.
struct Percentiles {
    private let sorted: [Double]

    init(_ samples: [Double]) { sorted = samples.sorted() }

    func value(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

}
