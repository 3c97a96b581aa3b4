import Foundation
import Logging
import Tracing
import Wire
import ZeroMQ

/// What an op handler knows about the request it serves.
public struct OpContext: Sendable {
    public let service: String
    public let op: String
    public var logger: Logger
    /// The op's span (`op <service>.<op>`), for the handler's attributes (`ride.order_id`, …);
    /// nil when tracing is off.
    public var span: (any Span)? = nil
}

/// An op result with a status other than 200 (e.g. `Replied(status: Status.created, body: order)`).
public struct Replied<Body: Encodable & Sendable>: Encodable, Sendable {
    public var status: Int
    public var body: Body

    public init(status: Int, body: Body) {
        self.status = status
        self.body = body
    }

    public func encode(to encoder: any Encoder) throws { try body.encode(to: encoder) }
}

/// A reply of a created trip or order is as hot as a fetched one: written by hand when its body is.
extension Replied: JSONWritable where Body: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) { body.writeJSON(to: &out) }
}

protocol StatusCarrying {
    var replyStatus: Int { get }
    var replyBody: Any { get }
}
extension Replied: StatusCarrying {
    var replyStatus: Int { status }
    var replyBody: Any { body }
}

/// Parameters of an op that takes none: accepts any JSON object — and only an object (the
/// synthesized decoding of an empty struct looked at nothing, so `[1]` and `null` passed).
public struct NoParams: Codable, Sendable {
    private struct NoKeys: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: NoKeys.self)
    }

    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }
}

/// The reply of the built-in `ping` op, which every worker answers.
@WireKeys
public struct PingReply: Codable, Sendable, Equatable {
    public var service: String
    public var instance: String
    public var pid: Int32
    public var uptimeSeconds: Double
    public var ops: [String]

}

/// The typed layer over the body convention: a service registers an async handler per op, with
/// Codable parameters and result; the router decodes `<op>\n<JSON>`, calls the handler and encodes
/// `<status>\n<JSON>`. Every failure becomes a clear error reply, never a crash:
/// unknown op → 404 `unknown_op`; JSON that does not parse → 400 `invalid_json`; JSON of the wrong
/// shape → 422 `invalid_params` naming the field; a thrown `ServiceError` → its status; anything
/// else → 500 `internal` (logged with details).
public struct OpRouter: Sendable {
    typealias Handler = @Sendable (_ json: [UInt8], _ context: OpContext) async throws -> ServiceReply

    public let service: String
    public let instance: String
    private var handlers: [String: Handler] = [:]
    private let startedAt = Date()
    /// Where keyed requests (`request_id` in their params) are remembered; nil: keys are ignored.
    /// With it every op is idempotent: the same key and params answer the first reply, another
    /// op or params 422 `idempotency_key_reused`, a repeat while the first runs 409 `request_in_progress`.
    public var requests: (any RequestLog)?
    /// When set, what `requests` keeps of each keyed request is sealed (`RequestSealing`): its
    /// hash keyed, its reply readable only by a retry of the same request.
    public var sealing: RequestSealing?
    /// Ops whose keyed replies are answered again for less than `RequestKey.lifetime`, by name:
    /// credentials (a log-in's tokens) replay only long enough for a lost reply's retry.
    public var replayWindows: [String: TimeInterval] = [:]
    /// Told of every answer: the op (`_unknown` for one not registered), the reply's status and
    /// how long it took. (ServiceKit's `OpMetrics` keeps them as a histogram.)
    public var onAnswered: (@Sendable (_ op: String, _ status: Int, _ elapsed: Duration) -> Void)?

    public init(service: String, instance: String = UUID().uuidString.lowercased()) {
        self.service = service
        self.instance = instance
    }

    /// The ops this router answers, sorted (`ping` included: every worker answers it).
    public var ops: [String] { (handlers.keys + ["ping"]).sorted() }

    /// Registers `op` with parameters of type `Params`.
    public mutating func on<Params: Decodable & Sendable, Result: Encodable & Sendable>(
        _ op: String, params: Params.Type = Params.self,
        _ handler: @escaping @Sendable (Params, OpContext) async throws -> Result
    ) {
        handlers[op] = { json, context in
            let params = try Self.decodeParams(Params.self, op: op, from: json)
            context.span?.describe(params)
            let result = try await handler(params, context)
            if let span = context.span { span.describe((result as? any StatusCarrying)?.replyBody ?? result) }
            let status = (result as? any StatusCarrying)?.replyStatus ?? Status.ok
            return ServiceReply(status: status, json: try JSONCoding.encode(result))
        }
    }

    /// Registers the handler of `op` (declared in the contract).
    public mutating func on<Params, Reply: Encodable>(
        _ op: Op<Params, Reply>, _ handler: @escaping @Sendable (Params, OpContext) async throws -> Reply
    ) {
        on(op.name, params: Params.self, handler)
    }

    /// Registers the handler of `op` whose replies carry a status of their own (201 for a creation).
    public mutating func on<Params, Reply: Encodable>(
        _ op: Op<Params, Reply>, _ handler: @escaping @Sendable (Params, OpContext) async throws -> Replied<Reply>
    ) {
        on(op.name, params: Params.self, handler)
    }

    /// Registers `op` with a handler of its params as they came and a reply as it goes (see `onRaw(_:_:)`).
    public mutating func onRaw<Params, Reply>(
        _ op: Op<Params, Reply>, _ handler: @escaping @Sendable (_ json: [UInt8], OpContext) async throws -> ServiceReply
    ) {
        onRaw(op.name, handler)
    }

    /// Decodes the params of `op` as its handler gets them: JSON that does not parse → 400
    /// `invalid_json`; JSON of the wrong shape, or a value its type refuses → 422 `invalid_params`
    /// naming the field (a `ServiceError` thrown by a params type keeps its status). Public so the
    /// fuzzer (Fuzz/) decodes every op's params through this very function, without a service.
    public static func decodeParams<Params: Decodable>(_ type: Params.Type, op: String, from json: [UInt8]) throws(ServiceError) -> Params {
        do {
            let params = try JSONCoding.decode(Params.self, from: json)
            // The limits its type states with `@WireField` (and so the API document).
            if let wire = params as? any WireValue {
                do throws(WireViolation) {
                    try wire.validate(at: "")
                } catch {
                    throw ServiceError.unprocessable("invalid_params", error.description)
                }
            }
            return params
        } catch let error as DecodingError {
            if case .dataCorrupted(let c) = error, c.codingPath.isEmpty {
                // JSON that parses but holds a value no Swift type here can (a number beyond Int's
                // range) is the request's content, not its syntax.
                guard (try? JSONCoding.decode(JSONValue.self, from: json)) != nil else {
                    throw .badRequest("invalid_json", "the params frame of op '\(op)' is not valid JSON")
                }
                throw .unprocessable("invalid_params", "a value is out of range: \(c.debugDescription)")
            }
            throw .unprocessable("invalid_params", JSONCoding.describe(error))
        } catch let error as ServiceError {
            throw error
        } catch {
            // Decoding reads only the request, so whatever else it throws is about the request too.
            throw .unprocessable("invalid_params", JSONCoding.describe(error))
        }
    }

    /// Registers `op` without parameters (any JSON object is accepted).
    public mutating func on<Result: Encodable & Sendable>(_ op: String, _ handler: @escaping @Sendable (OpContext) async throws -> Result) {
        on(op, params: NoParams.self) { _, context in try await handler(context) }
    }

    /// Registers `op` with a handler that takes the params as they came (raw JSON) and gives the reply
    /// as it is — for an op passed on unchanged to another service (tracking's shards forward a
    /// device's ops to the shard that keeps it, and return its reply, status and all).
    public mutating func onRaw(_ op: String, _ handler: @escaping @Sendable (_ json: [UInt8], OpContext) async throws -> ServiceReply) {
        handlers[op] = handler
    }

    /// Answers one request body; its correlation line, if it had one, is written back ahead.
    public func handle(_ body: [Frame], logger: Logger) async -> [Frame] {
        await reply(to: body, logger: logger).frames(answering: body)
    }

    func reply(to body: [Frame], logger: Logger) async -> ServiceReply {
        let request: ServiceRequest
        do {
            request = try ServiceRequest(frames: body)
        } catch {
            logger.warning("bad request", metadata: ["error": "\(error.message)"])
            return .error(error)
        }
        return await reply(to: request, logger: logger)
    }

    /// Answers one decoded request, as a worker would (another router may hand it a request to
    /// answer in its place).
    public func reply(to request: ServiceRequest, logger: Logger) async -> ServiceReply {
        guard let onAnswered else { return await dispatch(request, logger: logger) }
        let start = ContinuousClock.now
        let reply = await dispatch(request, logger: logger)
        onAnswered(request.op == "ping" || handlers[request.op] != nil ? request.op : "_unknown", reply.status, .now - start)
        return reply
    }

    private func dispatch(_ request: ServiceRequest, logger: Logger) async -> ServiceReply {
        if request.op == "ping" {
            return pingReply()
        }
        guard let handler = handlers[request.op] else {
            logger.warning("unknown op", metadata: ["op": "\(request.op)"])
            return .error(.notFound("unknown_op", "service '\(service)' has no op '\(request.op)'; ops: \(ops.joined(separator: ", "))"))
        }
        // The caller's trace continues here; a request without one (or with a malformed one) starts its own.
        return await Trace.span("op \(service).\(request.op)", kind: .server, parent: request.trace) { span in
            span?.setRPC(service: service, method: request.op)
            let reply = await reply(to: request, handler: handler, span: span, logger: logger)
            if let span, reply.status >= 500 { span.setStatus(SpanStatus(code: .error, message: "\(reply.status)")) }
            return reply
        }
    }

    private func reply(to request: ServiceRequest, handler: Handler, span: (any Span)?, logger: Logger) async -> ServiceReply {
        var opLogger = logger
        opLogger[metadataKey: "op"] = "\(request.op)"
        let context = OpContext(service: service, op: request.op, logger: opLogger, span: span)
        guard let requests else { return await answer(request, context, handler) }
        let key: RequestKey
        let claim: RequestClaim
        do {
            guard var keyed = try RequestKey(op: request.op, json: request.json, sealing: sealing) else {
                return await answer(request, context, handler)
            }
            keyed.kept = replayWindows[request.op] ?? RequestKey.lifetime
            key = keyed
            claim = try await requests.claim(key, now: Date())
        } catch {
            return errorReply(error, op: request.op, logger: opLogger)
        }
        switch claim {
        case .replay(let stored):
            // A reply kept before sealing was on is answered as it was kept.
            return sealing.flatMap { $0.open(stored, for: key) } ?? stored
        case .running:
            return .error(
                .conflict(RequestKey.inProgress, "a request with this idempotency key is still being answered; retry later for its reply"))
        case .reused:
            return .error(
                .unprocessable(
                    "idempotency_key_reused", "this idempotency key was used with another request (other params or op); use a new key"))
        case .first:
            let reply = await answer(request, context, handler)
            do {
                // A refusal changed nothing: forgotten, so a retry runs again. A success is answered
                // again to every retry. (Recorded after the op's transaction: see docs/design.md.)
                if reply.isSuccess {
                    try await requests.finish(key, reply: try sealing.map { try $0.seal(reply, for: key) } ?? reply)
                } else {
                    try await requests.release(key)
                }
            } catch {
                opLogger.warning("the reply of a keyed request was not recorded", metadata: ["error": "\(error)"])
            }
            return reply
        }
    }

    private func answer(_ request: ServiceRequest, _ context: OpContext, _ handler: Handler) async -> ServiceReply {
        do {
            return try await handler(request.json, context)
        } catch {
            return errorReply(error, op: request.op, logger: context.logger)
        }
    }

    /// An op's failure as its reply (logged: 5xx as errors, refusals as info).
    private func errorReply(_ error: any Error, op: String, logger opLogger: Logger) -> ServiceReply {
        switch error {
        case let error as ServiceError:
            if error.status >= 500 {
                opLogger.error(
                    "op failed", metadata: ["status": "\(error.status)", "code": "\(error.code)", "message": "\(error.message)"])
            } else {
                opLogger.info(
                    "op refused", metadata: ["status": "\(error.status)", "code": "\(error.code)", "message": "\(error.message)"])
            }
            return .error(error)
        case let error as any ServiceErrorConvertible where error.serviceError != nil:
            let serviceError = error.serviceError!
            opLogger.error(
                "op failed", metadata: ["status": "\(serviceError.status)", "code": "\(serviceError.code)", "error": "\(error)"])
            return .error(serviceError)
        default:
            let reference = UUID().uuidString.prefix(8).lowercased()
            opLogger.error("op threw", metadata: ["error": "\(error)", "reference": "\(reference)"])
            return .error(
                status: Status.internalError, code: "internal", message: "internal error in '\(service).\(op)' (log reference \(reference))"
            )
        }
    }

    private func pingReply() -> ServiceReply {
        let reply = PingReply(
            service: service, instance: instance, pid: ProcessInfo.processInfo.processIdentifier,
            uptimeSeconds: (Date().timeIntervalSince(startedAt) * 1000).rounded() / 1000, ops: ops)
        return ServiceReply(status: Status.ok, json: (try? JSONCoding.encode(reply)) ?? Array("{}".utf8))
    }
}
