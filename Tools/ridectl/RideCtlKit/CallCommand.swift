import ArgumentParser
import Bus
import Foundation
import ServiceKit
import SettingsKit
import Wire

struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Send one request to a service through the broker and print the reply.",
        discussion: """
            The request body is [OP][JSON]. The reply's status goes to standard error, its JSON \
            (pretty) to standard output. Exit status: 0 for a 2xx reply, 1 for any other status, \
            2 when no reply came (no worker, or it timed out).

            Examples:
              ridectl call users ping
              ridectl call tracking nearby '{"location":{"type":"Point","coordinates":[35.1,47.8]},"radius":2000}'
              echo '{"id":"o1"}' | ridectl call orders get -
            """)

    @Argument(help: "Service name (users, orders, trips, tracking, notifications, …).")
    var service: String

    @Argument(help: "Operation, e.g. ping, get, nearby.")
    var op: String

    @Argument(help: "JSON parameters; - reads them from standard input. Default {}.")
    var json: String?

    @Option(name: .customLong("timeout-ms"), help: "How long each attempt waits for the reply.")
    var timeoutMilliseconds = 2500

    @Option(help: "Attempts before giving up (the Lazy Pirate pattern; ops are idempotent).")
    var attempts = 3

    @OptionGroup var bus: BusAddresses

    mutating func validate() throws {
        guard timeoutMilliseconds > 0 else { throw ValidationError("--timeout-ms must be positive") }
        guard (1...10).contains(attempts) else { throw ValidationError("--attempts must be from 1 to 10") }
        if let json, json != "-" { _ = try Self.parse(json) }
        _ = try withValidation { try bus.brokerEndpoint() }
    }

    static func parse(_ text: String) throws -> [UInt8] {
        let bytes = Array(text.utf8)
        do {
            _ = try JSONCoding.decode(JSONValue.self, from: bytes)
        } catch {
            throw ValidationError("the parameters are not valid JSON: \(JSONCoding.describe(error)) — got \(text.prefix(60))")
        }
        return bytes
    }

    func run() async throws {
        let params: [UInt8]
        if json == "-" {
            let input = FileHandle.standardInput.readDataToEndOfFile()
            params = try Self.parse(String(decoding: input, as: UTF8.self))
        } else {
            params = Array((json ?? "{}").utf8)
        }
        try await bus.secure()
        var options = MDPClient.Options()
        options.timeout = .milliseconds(timeoutMilliseconds)
        options.attempts = attempts
        let client = try await ServiceClient(broker: try bus.brokerEndpoint(), options: options, logger: CLILogging.logger)
        defer { Task { await client.close() } }
        let reply: ServiceReply
        do {
            reply = try await client.callRaw(service, op, json: params)
        } catch let error as MDPClientError {
            Output.err("ridectl call: \(error)\n")
            throw ExitCode(2)
        } catch let error as ServiceError {
            Output.err("ridectl call: \(error)\n")
            throw ExitCode(1)
        }
        let colored = Output.stderrIsTerminal
        let statusLine = "\(reply.status) \(Self.reason(reply.status))"
        Output.err((colored ? (reply.isSuccess ? ANSI.green(statusLine) : ANSI.red(statusLine)) : statusLine) + "\n")
        if let value = try? JSONCoding.decode(JSONValue.self, from: reply.json),
            let pretty = try? JSONCoding.encoder(pretty: true).encode(value)
        {
            Output.out(String(decoding: pretty, as: UTF8.self) + "\n")
        } else {
            Output.out(String(decoding: reply.json, as: UTF8.self) + "\n")
        }
        if !reply.isSuccess { throw ExitCode(1) }
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 422: "Unprocessable Content"
        case 500: "Internal Error"
        case 503: "Unavailable"
        default: ""
        }
    }
}
