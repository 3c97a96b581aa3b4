import ArgumentParser
import Bus
import Foundation
import ServiceKit
import SettingsKit

/// `ridectl trace ORDER_ID`: one ride's timeline across the processes.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "A ride's timeline across processes: each status, which process caused it, and where the time went.",
        discussion: """
            From the exported spans when there are some for the order (--spans; `ridectl up --traces` \
            records them): per step the time (its database commit, else its event's publication), the status \
            (or event), the process and the hops — BUS (event \
            published → reactor starts), QUEUE (request sent → handler starts, the broker's queue), HANDLER \
            (the handler's own time), COMMIT (database commits), OUTBOX (commit → the event's publication) and \
            TOTAL (call or event → publication). Otherwise from the events: orders' events of the order and \
            trips' events of its trips (through the broker), with the gap between consecutive ones.

            Exit status: 0 with a timeline, 1 when neither the spans nor the events know the order, \
            2 when there are no spans of it and the services cannot be asked for events.

            Examples:
              ridectl trace 8f2c1d0e-…
              ridectl trace 8f2c1d0e-… --json | jq '.steps[] | {label, hops}'
              ridectl trace 8f2c1d0e-… --from events
            """)

    enum Source: String, ExpressibleByArgument, CaseIterable {
        case auto, spans, events
    }

    @Argument(help: "The order's id.")
    var orderID: String

    static let spansKey = SettingKey(
        "spans", env: "RIDE_TRACES_FILE", unset: "<data-dir>/spans.jsonl when it exists",
        "The spans file (JSON lines, as `ridectl traces collect` writes)")
    @Option(name: Self.spansKey.name, help: Self.spansKey.help) var spans: String?

    @Option(name: Self.dataDirectoryKey.name, help: Self.dataDirectoryKey.help)
    var dataDirectory: String?
    static let dataDirectoryKey = ServiceSettingKeys.dataDirectory(holding: "The platform's data directory")

    @Option(help: "Where the timeline comes from: auto (spans when they know the order, else events), spans, events.")
    var from: Source = .auto

    @Flag(help: "Print the timeline as JSON.")
    var json = false

    @Option(name: .customLong("timeout-ms"), help: "How long each request for events waits for its reply.")
    var timeoutMilliseconds = 5000

    @OptionGroup var bus: BusAddresses

    mutating func validate() throws {
        guard !orderID.isEmpty, orderID.count <= 200, !orderID.contains(where: \.isWhitespace) else {
            throw ValidationError("ORDER_ID must be an order's id (no spaces, at most 200 characters), got '\(orderID.prefix(60))'")
        }
        guard timeoutMilliseconds > 0 else { throw ValidationError("--timeout-ms must be positive") }
        _ = try withValidation { try bus.brokerEndpoint() }
    }

    func run() async throws {
        var tried: [String] = []
        if from != .events {
            let (path, explicit) = spansPath()
            if FileManager.default.fileExists(atPath: path) {
                let contents: SpanFile.Contents
                do {
                    contents = try SpanFile.read(path: path, orderID: orderID)
                } catch {
                    Output.err("ridectl trace: cannot read \(path): \(error.localizedDescription)\n")
                    throw ExitCode(2)
                }
                if contents.malformedLines > 0 {
                    Output.err(
                        "ridectl trace: warning: skipped \(contents.malformedLines) malformed line\(contents.malformedLines == 1 ? "" : "s") of \(path)\n"
                    )
                }
                if let timeline = SpanTimelineBuilder(spans: contents.spans).timeline(orderID: orderID) {
                    return show(timeline, origin: path)
                }
                tried.append("no span of it in \(path)")
            } else if explicit || from == .spans {
                Output.err(
                    "ridectl trace: warning: no spans file at \(path) (`ridectl up --traces` or `ridectl traces collect` writes one)\n")
                if from == .spans { throw ExitCode(2) }
                tried.append("no spans file at \(path)")
            }
            if from == .spans {
                Output.err("ridectl trace: order \(orderID): \(tried.joined(separator: "; "))\n")
                throw ExitCode(1)
            }
        }
        let timeline: RideTimeline?
        do {
            timeline = try await eventTimeline()
        } catch {
            Output.err(
                "ridectl trace: order \(orderID): \((tried + ["cannot ask orders for its events: \(error)"]).joined(separator: "; "))\n")
            throw ExitCode(2)
        }
        guard let timeline else {
            Output.err("ridectl trace: no order \(orderID): \((tried + ["no order.* event of it from orders"]).joined(separator: "; "))\n")
            throw ExitCode(1)
        }
        if !tried.isEmpty { Output.err("ridectl trace: \(tried.joined(separator: "; ")): the timeline is from the events\n") }
        show(timeline, origin: "the events of orders and trips")
    }

    /// The spans file, and whether it was asked for (a flag or the variable) rather than the default.
    func spansPath() -> (String, Bool) {
        let data = Self.dataDirectoryKey.resolve(dataDirectory).value
        let setting = Self.spansKey.resolve(spans, default: SpanFile.defaultPath(dataDirectory: data))
        return (setting.value, spans != nil || setting.origin == "RIDE_TRACES_FILE")
    }

    func eventTimeline() async throws -> RideTimeline? {
        try await bus.secure()
        var options = MDPClient.Options()
        options.timeout = .milliseconds(timeoutMilliseconds)
        options.attempts = 1
        let client = try await ServiceClient(broker: try bus.brokerEndpoint(), options: options, logger: CLILogging.logger)
        defer { Task { await client.close() } }
        return try await EventHistory.timeline(orderID: orderID, client: client, timeout: .milliseconds(timeoutMilliseconds))
    }

    func show(_ timeline: RideTimeline, origin: String) {
        if json {
            Output.out((try? TimelineRenderer.json(timeline)) ?? "{}\n")
        } else {
            Output.out(TimelineRenderer.text(timeline, origin: origin))
        }
    }
}
