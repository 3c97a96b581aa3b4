import Foundation
import Hummingbird
import Logging
import ServiceKit
import SettingsKit
import Wire

/// An OTLP/HTTP receiver for traces in JSON: `POST /v1/traces` with `application/json` appends
/// the request's spans to a `SpanFile`. What `ridectl traces collect` and `ridectl up --traces` run.
///
/// A body that is not an OTLP JSON trace export is answered 400 naming what is wrong (logged,
/// nothing stored); a body over the limit 413; protobuf or a compressed body 415 (set
/// `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`). Metrics and logs are accepted and dropped, so an
/// exporter that sends them too does not keep retrying.
public struct SpanCollector: Sendable {
    public static let defaultMaxBodyBytes = 8 << 20
    public static let success = #"{"partialSuccess":{}}"#

    public let writer: SpanFileWriter
    public let maxBodyBytes: Int
    public let logger: Logger

    public init(writer: SpanFileWriter, maxBodyBytes: Int = defaultMaxBodyBytes, logger: Logger) {
        self.writer = writer
        self.maxBodyBytes = maxBodyBytes
        self.logger = logger
    }

    /// The HTTP answer to one export request.
    public struct Reply: Sendable, Equatable {
        public var status: Int
        public var json: String
        public var stored: Int

        static func refused(_ status: Int, _ message: String) -> Reply {
            // OTLP's error body is a google.rpc.Status: code 3 is INVALID_ARGUMENT.
            let text = (try? JSONCoding.encodeText(message)) ?? "\"\""
            return Reply(status: status, json: #"{"code":3,"message":\#(text)}"#, stored: 0)
        }
    }

    /// Handles a `/v1/traces` request's content type, encoding and body (the socket-free part).
    public func receive(contentType: String?, contentEncoding: String?, body: [UInt8]) async -> Reply {
        let reply: Reply
        let type = contentType?.lowercased() ?? ""
        if let encoding = contentEncoding?.lowercased(), !encoding.isEmpty, encoding != "identity" {
            reply = .refused(
                415, "Content-Encoding \(encoding) is not supported: send the JSON uncompressed (OTEL_EXPORTER_OTLP_COMPRESSION=none)")
        } else if !type.isEmpty, !type.hasPrefix("application/json") {
            reply = .refused(
                415, "Content-Type \(type) is not supported: this collector takes OTLP JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)")
        } else if body.count > maxBodyBytes {
            reply = .refused(413, "the body is \(body.count) bytes, over the limit of \(maxBodyBytes)")
        } else {
            do {
                let spans = try OTLPTraceDecoder.decode(body)
                try await writer.append(spans)
                return Reply(status: 200, json: Self.success, stored: spans.count)
            } catch let problem as OTLPTraceDecoder.Problem {
                reply = .refused(400, "not an OTLP JSON trace export: \(problem.message)")
            } catch {
                logger.error("cannot store spans", metadata: ["file": "\(writer.path)", "error": "\(error)"])
                return Reply(status: 500, json: #"{"code":13,"message":"cannot store the spans"}"#, stored: 0)
            }
        }
        return reply.logged(logger)
    }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let maxBodyBytes = maxBodyBytes
        router.post("v1/traces") { request, _ -> Response in
            let reply: Reply
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodyBytes {
                reply = Reply.refused(413, "the body is \(length) bytes, over the limit of \(maxBodyBytes)").logged(logger)
            } else {
                do {
                    var request = request
                    let buffer = try await request.collectBody(upTo: maxBodyBytes)
                    reply = await receive(
                        contentType: request.headers[.contentType], contentEncoding: request.headers[.contentEncoding],
                        body: Array(buffer.readableBytesView))
                } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                    reply = Reply.refused(413, "the body is over the limit of \(maxBodyBytes) bytes").logged(logger)
                }
            }
            return Self.response(reply)
        }
        // Metrics and logs: not kept, but answered, so an exporter of all three is not retrying.
        for signal in ["v1/metrics", "v1/logs"] {
            router.post(RouterPath(signal)) { _, _ -> Response in Self.response(Reply(status: 200, json: Self.success, stored: 0)) }
        }
        return router
    }

    /// The collector as a Hummingbird application on `listen`; `onRunning` gets the bound port.
    public func application(listen: HostPort, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        return Application(
            router: router(),
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: "ridectl-traces"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? listen.port) },
            logger: quiet)
    }

    static func response(_ reply: Reply) -> Response {
        Response(
            status: .init(code: reply.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: Array(reply.json.utf8))))
    }
}

extension SpanCollector.Reply {
    func logged(_ logger: Logger) -> Self {
        logger.warning("refused an OTLP request", metadata: ["status": "\(status)", "reason": "\(json)"])
        return self
    }
}
