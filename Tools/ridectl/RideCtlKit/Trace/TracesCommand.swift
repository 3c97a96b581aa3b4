import ArgumentParser
import Foundation
import ServiceKit
import SettingsKit

/// `ridectl traces collect`: an OTLP/HTTP JSON receiver writing the spans it gets to a file.
struct TracesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "traces",
        abstract: "Collect the platform's exported spans (OTLP/HTTP JSON) for `ridectl trace`.",
        subcommands: [Collect.self])

    struct Collect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "collect",
            abstract: "Receive spans on POST /v1/traces (OTLP JSON) and append them to a file, one JSON line each, until Ctrl-C.",
            discussion: """
                Point the services at it with OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT and \
                OTEL_EXPORTER_OTLP_PROTOCOL=http/json (`ridectl up --traces` runs one itself and does that). \
                A body that is not an OTLP JSON trace export is answered 400 naming what is wrong, and nothing of it is stored; \
                a body over --max-body-bytes 413; protobuf or compressed bodies 415. /v1/metrics and /v1/logs are answered and dropped.

                Example:
                  ridectl traces collect --listen 127.0.0.1:4318 --out .data/spans.jsonl
                  ridectl trace 8f2c1d…   # the timeline of one ride from them
                """)

        static let listenKey = SettingKey(
            "listen", env: "RIDE_TRACES_LISTEN", default: "127.0.0.1:4318", "Address to listen on (HOST:PORT; port 0 picks a free one)")
        static let outKey = SettingKey(
            "out", env: "RIDE_TRACES_FILE", unset: "<data-dir>/spans.jsonl", "The file the spans are appended to")
        @Option(name: Self.listenKey.name, help: Self.listenKey.help) var listen: String?
        @Option(name: Self.outKey.name, help: Self.outKey.help) var out: String?

        @Option(name: Self.dataDirectoryKey.name, help: Self.dataDirectoryKey.help)
        var dataDirectory: String?
        static let dataDirectoryKey = ServiceSettingKeys.dataDirectory(
            holding: "The platform's data directory (where the spans go by default)")

        @Option(name: .customLong("max-body-bytes"), help: "The largest request body taken; larger ones are answered 413.")
        var maxBodyBytes = SpanCollector.defaultMaxBodyBytes

        mutating func validate() throws {
            _ = try address()
            guard maxBodyBytes >= 1024 else { throw ValidationError("--max-body-bytes must be at least 1024, got \(maxBodyBytes)") }
        }

        func address() throws -> HostPort {
            try withValidation {
                try HostPort.parse(Self.listenKey.resolve(listen), name: "--listen")
            }
        }

        func run() async throws {
            let data = Self.dataDirectoryKey.resolve(dataDirectory).value
            let path = Self.outKey.resolve(out, default: SpanFile.defaultPath(dataDirectory: data)).value
            let writer = try SpanFileWriter(path: path)
            let collector = SpanCollector(writer: writer, maxBodyBytes: maxBodyBytes, logger: CLILogging.logger)
            let listen = try address()
            let app = collector.application(listen: listen) { port in
                Output.out("ridectl traces collect: OTLP/HTTP JSON on http://\(listen.host):\(port)/v1/traces, spans appended to \(path)\n")
            }
            try await app.runService()
        }
    }
}
