import Wire
import ZeroMQ

/// HTTP-like status codes of the body convention.
public enum Status {
    public static let ok = 200
    public static let created = 201
    public static let badRequest = 400
    public static let unauthorized = 401
    public static let forbidden = 403
    public static let notFound = 404
    public static let conflict = 409
    public static let gone = 410
    public static let unprocessable = 422
    public static let internalError = 500
    public static let unavailable = 503
}

/// An error reply: `{"error":{"code":"<machine_code>","message":"<human text>"}}` with a status.
/// Throw one from an op handler to answer with it.
public struct ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status) \(code): \(message)" }

    public static func badRequest(_ code: String, _ message: String) -> ServiceError { .init(status: Status.badRequest, code: code, message: message) }
    public static func notFound(_ code: String, _ message: String) -> ServiceError { .init(status: Status.notFound, code: code, message: message) }
    public static func conflict(_ code: String, _ message: String) -> ServiceError { .init(status: Status.conflict, code: code, message: message) }
    public static func unprocessable(_ code: String, _ message: String) -> ServiceError { .init(status: Status.unprocessable, code: code, message: message) }
    public static func forbidden(_ code: String, _ message: String) -> ServiceError { .init(status: Status.forbidden, code: code, message: message) }
    public static func unauthorized(_ code: String, _ message: String) -> ServiceError { .init(status: Status.unauthorized, code: code, message: message) }
}

/// An error from below the service layer (a database, a file) that knows which reply it deserves —
/// e.g. a full disk is "503, try again later", not an internal error. Nil: an internal error after all.
public protocol ServiceErrorConvertible: Error {
    var serviceError: ServiceError? { get }
}

/// A request body: `[op][JSON params]`, optionally `[op][JSON params][request id]`. A missing
/// JSON frame means `{}`. The request id is opaque to the service; it is echoed as the reply's last
/// frame, so a client can have many requests in flight on one connection (see `MDPClient`).
public struct ServiceRequest: Equatable, Sendable {
    public var op: String
    public var json: [UInt8]
    public var requestID: Frame?

    public init(op: String, json: [UInt8], requestID: Frame? = nil) {
        self.op = op
        self.json = json
        self.requestID = requestID
    }

    public var frames: [Frame] { [Frame(frame: op), json] + (requestID.map { [$0] } ?? []) }

    public init(frames: [Frame]) throws(ServiceError) {
        guard (1...3).contains(frames.count) else {
            throw .badRequest("bad_request", "a request body is [op][JSON params] (and an optional request id); got \(frames.count) frames")
        }
        requestID = frames.count == 3 ? frames[2] : nil
        guard let op = frames[0].utf8String, !op.isEmpty else {
            throw .badRequest("bad_request", "the op frame is empty or not UTF-8")
        }
        self.op = op
        self.json = frames.count >= 2 && !frames[1].isEmpty ? frames[1] : Array("{}".utf8)
    }

    /// The caller's trace context, carried in the request-id frame (`RequestID`); nil when none
    /// or malformed — the op then starts a trace of its own.
    public var trace: TraceHeaders? { requestID.flatMap(RequestID.trace(in:)) }
}

/// A reply body: `[status][JSON]`, status as ASCII decimal (`200`, `404`, ...); the request's id
/// frame, when it had one, follows (the client strips it).
public struct ServiceReply: Equatable, Sendable {
    public var status: Int
    public var json: [UInt8]

    public init(status: Int, json: [UInt8]) {
        self.status = status
        self.json = json
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    public var frames: [Frame] { [Frame(frame: String(status)), json] }

    public static func error(status: Int, code: String, message: String) -> ServiceReply {
        // Encoding two strings cannot fail; fall back to a fixed text rather than trap if it ever did.
        let json = (try? JSONCoding.encode(ErrorBody(code: code, message: message))) ?? Array(#"{"error":{"code":"internal","message":"unencodable error"}}"#.utf8)
        return ServiceReply(status: status, json: json)
    }

    public static func error(_ error: ServiceError) -> ServiceReply {
        .error(status: error.status, code: error.code, message: error.message)
    }

    public init(frames: [Frame]) throws(ServiceError) {
        guard frames.count == 2 else {
            throw ServiceError(status: Status.internalError, code: "bad_reply", message: "a reply body is [status][JSON]; got \(frames.count) frames")
        }
        // (a request id, if any, was stripped by the client)
        guard let text = frames[0].utf8String, text.count == 3, let status = Int(text) else {
            throw ServiceError(status: Status.internalError, code: "bad_reply", message: "the status frame is not a 3-digit code")
        }
        self.status = status
        self.json = frames[1]
    }

    /// The error this reply carries, when it is not a success.
    public var serviceError: ServiceError? {
        guard !isSuccess else { return nil }
        if let body = try? JSONCoding.decode(ErrorBody.self, from: json) {
            return ServiceError(status: status, code: body.error.code, message: body.error.message)
        }
        return ServiceError(status: status, code: "error", message: String(decoding: json, as: UTF8.self))
    }
}
