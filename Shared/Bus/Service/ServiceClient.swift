import Foundation
import Logging
import Tracing
import Wire
import ZeroMQ

/// Calls ops of platform services through the broker: `<op>\n<JSON>` out, `<status>\n<JSON>` back.
public struct ServiceClient: Sendable {
    /// The client of the (first) broker.
    public let mdp: MDPClient
    /// Set when the bus has several brokers: requests go through whichever answers.
    public let failover: BrokerFailover?

    public init(mdp: MDPClient) {
        self.mdp = mdp
        failover = nil
    }

    /// `broker`: one endpoint, or several separated by commas (`BusAddress`).
    public init(broker: String, options: MDPClient.Options = .init(), logger: Logger) async throws {
        let endpoints = BusAddress.endpoints(broker)
        if endpoints.count > 1 {
            let failover = try await BrokerFailover(endpoints: endpoints, options: options, logger: logger)
            (self.failover, mdp) = (failover, failover.clients[0])
        } else {
            (failover, mdp) = (nil, try await MDPClient(endpoint: broker, options: options, logger: logger))
        }
    }

    private func request(
        service: String, body: [Frame], correlated: Bool = false, timeout: Duration?, attempts: Int? = nil, trace: TraceHeaders? = nil
    )
        async throws -> [Frame]
    {
        if let failover {
            return try await failover.request(
                service: service, body: body, correlated: correlated, timeout: timeout, attempts: attempts, trace: trace)
        }
        return try await mdp.request(
            service: service, body: body, correlated: correlated, timeout: timeout, attempts: attempts, trace: trace)
    }

    /// Calls `service.op` with `params` and decodes a successful reply as `Result`.
    /// Throws `ServiceError` for a non-2xx reply, `MDPClientError` when no reply came.
    public func call<Params: Encodable, Result: Decodable>(
        _ service: String, _ op: String, _ params: Params, as: Result.Type = Result.self, timeout: Duration? = nil
    ) async throws -> Result {
        let reply = try await callRaw(service, op, json: JSONCoding.encode(params), timeout: timeout)
        if let error = reply.serviceError { throw error }
        do {
            return try JSONCoding.decode(Result.self, from: reply.json)
        } catch {
            throw ServiceError(
                status: Status.internalError, code: "bad_reply",
                message: "reply of \(service).\(op) does not decode: \(JSONCoding.describe(error))")
        }
    }

    /// Calls `op` with `params` and decodes its successful reply.
    public func call<Params, Reply: Decodable>(_ op: Op<Params, Reply>, _ params: Params, timeout: Duration? = nil) async throws -> Reply {
        try await call(op.service, op.name, params, as: Reply.self, timeout: timeout)
    }

    /// Calls `op` with `params` keyed by `key` (their `request_id`, as the gateway passes an
    /// `Idempotency-Key`): sent again after its reply was lost — a broker or a service gone at that
    /// moment — it is done once and answered with the first reply (`RequestLog`). Sent again
    /// while the first is still being answered (409 `request_in_progress`), it asks again every
    /// `keyedRetryInterval`, `keyedRetries` times at most, for that reply.
    public func call<Params, Reply: Decodable>(_ op: Op<Params, Reply>, _ params: Params, key: String, timeout: Duration? = nil)
        async throws -> Reply
    {
        guard case .object(var keyed) = try JSONValue(encoding: params) else {
            throw ServiceError(
                status: Status.badRequest, code: "invalid_params",
                message: "params of \(op.service).\(op.name) are not a JSON object: no place for \(RequestKey.member)")
        }
        keyed[RequestKey.member] = .string(key)
        var retries = 0
        while true {
            do {
                return try await call(op.service, op.name, JSONValue.object(keyed), as: Reply.self, timeout: timeout)
            } catch let error as ServiceError where error.code == RequestKey.inProgress && retries < Self.keyedRetries {
                retries += 1
                try await Task.sleep(for: Self.keyedRetryInterval)
            }
        }
    }

    static let keyedRetries = 20
    static let keyedRetryInterval = Duration.milliseconds(250)

    /// Calls `op` on another service than its own (a tracking shard's peer service answers tracking's ops).
    public func call<Params, Reply: Decodable>(_ op: Op<Params, Reply>, on service: String, _ params: Params, timeout: Duration? = nil)
        async throws -> Reply
    {
        try await call(service, op.name, params, as: Reply.self, timeout: timeout)
    }

    /// Calls `op` with params as JSON (as an app sent them); the status and JSON as they came.
    public func callRaw<Params, Reply>(_ op: Op<Params, Reply>, json: [UInt8], timeout: Duration? = nil, attempts: Int? = nil) async throws
        -> ServiceReply
    {
        try await callRaw(op.service, op.name, json: json, timeout: timeout, attempts: attempts)
    }

    /// Calls `service.op` and returns the status and JSON as they came.
    /// With tracing on, the call is a span (`call <service>.<op>`) whose context the request carries.
    public func callRaw(_ service: String, _ op: String, json: [UInt8], timeout: Duration? = nil, attempts: Int? = nil) async throws
        -> ServiceReply
    {
        if let refusal = ProcessRole.held?.refusal(toCall: service, op: op) {
            throw ServiceError(status: 403, code: "forbidden", message: refusal.reason)
        }
        return try await Trace.span("call \(service).\(op)", kind: .client) { span in
            span?.setRPC(service: service, method: op)
            let body = try await request(
                service: service, body: ServiceRequest(op: op, json: json).frames, correlated: true,
                timeout: timeout, attempts: attempts, trace: span == nil ? nil : Trace.currentHeaders)
            let reply = try ServiceReply(frames: body)
            if let span, reply.status >= 500 { span.setStatus(SpanStatus(code: .error, message: "\(reply.status)")) }
            return reply
        }
    }

    /// `mmi.service`: whether `service` has a worker (true: 200, false: 404).
    public func hasWorkers(_ service: String, timeout: Duration? = nil) async throws -> Bool {
        let body = try await request(service: "mmi.service", body: [Frame(frame: service)], timeout: timeout)
        return body.first?.utf8String == "200"
    }

    /// The client's thread as a task executor (see `MDPClient.executor`).
    public var executor: any TaskExecutor { mdp.executor }

    public func close() async {
        if let failover { await failover.close() } else { await mdp.close() }
    }
}
