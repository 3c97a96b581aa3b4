import ArgumentParser
import Bus
import Foundation
import ServiceKit
import Wire

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish an event on the bus (for trying things out, and for scripts).",
        discussion: """
            Wraps JSON data in a CloudEvents envelope (source, type, a sequence from 1) and publishes \
            it on TOPIC. Waits up to --wait-ms for a subscriber to TOPIC first: the bus drops events \
            nobody subscribed to, and says so.

            Example:
              ridectl publish demo.hello '{"text":"hi"}' --count 3
            """)

    @Argument(help: "Topic, e.g. demo.hello.") var topic: String
    @Argument(help: "JSON data; - reads it from standard input. Default {}.") var json: String?
    @Option(help: "CloudEvents type.") var type = "demo"
    @Option(help: "CloudEvents source.") var source = "ridectl"
    @Option(help: "Publish this many copies (sequences 1…N).") var count = 1
    @Option(name: .customLong("wait-ms"), help: "How long to wait for a subscriber before publishing.") var waitMilliseconds = 2000
    @OptionGroup var bus: BusAddresses

    mutating func validate() throws {
        if let problem = Topic.problem(with: topic) { throw ValidationError("topic '\(topic)': \(problem)") }
        guard count >= 1 else { throw ValidationError("--count must be at least 1") }
        if let json, json != "-" { _ = try CallCommand.parse(json) }
        _ = try withValidation { try bus.publishEndpoint() }
    }

    func run() async throws {
        let text = json == "-" ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : (json ?? "{}")
        let data = try JSONCoding.decode(JSONValue.self, from: CallCommand.parse(text))
        try await bus.secure()
        let publisher = try await EventPublisher(endpoint: try bus.publishEndpoint(), source: source, logger: CLILogging.logger)
        let heard = await publisher.waitForSubscriber(to: topic, timeout: .milliseconds(waitMilliseconds))
        for _ in 0..<count {
            try publisher.publish(topic: topic, type: type, data: data)
        }
        await publisher.close()
        if !heard {
            Output.err(
                "ridectl publish: nobody subscribes to \(topic) (or the bus is not running): the event\(count == 1 ? " was" : "s were") dropped\n"
            )
            throw ExitCode(1)
        }
        Output.err("published \(count) event\(count == 1 ? "" : "s") on \(topic)\n")
    }
}
