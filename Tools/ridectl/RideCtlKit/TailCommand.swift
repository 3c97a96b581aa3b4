import ArgumentParser
import Bus
import Foundation
import RideContract
import ServiceKit
import SettingsKit
import Wire

struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print events from the bus as they happen.",
        discussion: """
            One line per event: time (UTC), topic, source#sequence, and the fields that matter for its \
            type (an order: id, status, rider, driver, version; a location: device, position, speed; \
            a trip: id, ETA). --fields picks others; --json prints the whole event. \
            PREFIX filters by topic prefix (order. — every order event; device.location.42 — one device); \
            none means everything. A warning goes to standard error when a source's sequence jumps \
            (events were lost) or a malformed message is skipped.

            Examples:
              ridectl tail order.
              ridectl tail --json trip. | jq .data
              ridectl tail device.location. --count 10
              ridectl tail order.status. --fields order.id,order.pickup.address
            """)

    @Argument(help: "Topic prefixes to subscribe to (none: all topics).")
    var prefixes: [String] = []

    @Flag(help: "Print each event's CloudEvents JSON exactly as received, one per line (for jq).")
    var json = false

    @Option(
        help: "Show these fields of each event's data instead of its type's headline: comma-separated dotted paths (order.id,order.status)."
    )
    var fields: String?

    @Option(help: "Exit after this many events.")
    var count: Int?

    @Option(name: .customLong("timeout"), help: "Exit with status 1 after this many seconds (when --count was not reached).")
    var timeoutSeconds: Double?

    @Flag(name: .customLong("no-color"), help: "No ANSI colours (also: NO_COLOR is set, or output is not a terminal).")
    var noColor = false

    @OptionGroup var bus: BusAddresses

    mutating func validate() throws {
        for prefix in prefixes where !prefix.isEmpty {
            if let problem = Topic.problem(with: prefix) { throw ValidationError("prefix '\(prefix)': \(problem)") }
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let fields { _ = try Self.parse(fields: fields) }
        if let timeoutSeconds, timeoutSeconds <= 0 { throw ValidationError("--timeout must be positive") }
        _ = try withValidation { try bus.subscribeEndpoint() }
    }

    func run() async throws {
        let endpoint = try bus.subscribeEndpoint()
        let subscribed = prefixes.isEmpty ? [""] : prefixes
        try await bus.secure()
        let subscriber = try await EventSubscriber<JSONValue>(
            endpoint: endpoint, prefixes: subscribed, options: .platform, logger: CLILogging.logger)
        let formatter = EventLineFormatter(
            colored: !noColor && Output.stdoutIsTerminal,
            width: Output.stdoutIsTerminal ? Output.terminalWidth : .max,  // a pipe gets whole lines
            fields: try fields.map(Self.parse(fields:)))
        let warnColor = !noColor && Output.stderrIsTerminal
        if let timeoutSeconds {
            Task {
                try await Task.sleep(for: .milliseconds(Int(timeoutSeconds * 1000)))
                Output.err("ridectl tail: timed out after \(timeoutSeconds) s\n")
                Foundation.exit(1)
            }
        }
        var printed = 0
        for await batch in subscriber.deliveries {
            var out = ""
            var err = ""
            for delivery in batch {
                switch delivery {
                case .event(let received):
                    if case .gap(let gap) = received.sequence, Events.prefixes(subscribed, cover: received.event.source) {
                        let text = "warning: sequence gap: \(gap)\n"
                        err += warnColor ? ANSI.yellow(text) : text
                    }
                    if case .conflict = received.sequence {
                        let text =
                            "warning: sequence conflict: source \(received.event.source), sequence \(received.event.sequence) seen before with another event id\n"
                        err += warnColor ? ANSI.yellow(text) : text
                    }
                    out +=
                        json ? String(decoding: received.raw, as: UTF8.self) : formatter.line(topic: received.topic, event: received.event)
                    out += "\n"
                    printed += 1
                case .malformed(let problem):
                    let text = "warning: skipped malformed message: \(problem)\n"
                    err += warnColor ? ANSI.yellow(text) : text
                }
                if let count, printed >= count { break }
            }
            if !err.isEmpty { Output.err(err) }
            if !out.isEmpty { Output.out(out) }
            if let count, printed >= count { break }
        }
        await subscriber.close()
    }

    /// `order.id,order.status` → fields labelled by their paths.
    static func parse(fields text: String) throws -> [EventHeadlines.Field] {
        let paths = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        for path in paths {
            let wellFormed =
                !path.isEmpty && path.count <= 200
                && path.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
            guard wellFormed else { throw ValidationError("--fields: '\(path.prefix(60))' is not a dotted path such as order.status") }
        }
        return paths.map { EventHeadlines.Field($0, $0) }
    }
}
