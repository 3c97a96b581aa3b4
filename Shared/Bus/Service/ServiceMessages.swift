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

    public static func badRequest(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.badRequest, code: code, message: message)
    }
    public static func notFound(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.notFound, code: code, message: message)
    }
    public static func conflict(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.conflict, code: code, message: message)
    }
    public static func unprocessable(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.unprocessable, code: code, message: message)
    }
    public static func forbidden(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.forbidden, code: code, message: message)
    }
    public static func unauthorized(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.unauthorized, code: code, message: message)
    }
}

/// An error from below the service layer (a database, a file) that knows which reply it deserves —
/// e.g. a full disk is "503, try again later", not an internal error. Nil: an internal error after all.
public protocol ServiceErrorConvertible: Error {
    var serviceError: ServiceError? { get }
}

/// A request body: one frame, `<op>\n<JSON params>`; `<op>` alone means `{}`. A multiplexing
/// client writes its correlation line ahead (`RequestID`: `r<id>[ <traceparent>…]\n`); it is opaque
/// to the service and written back ahead of the reply, so a client can have many requests in
/// flight on one connection (see `MDPClient`). One frame, because a secured bus seals each frame
/// on its own.
public struct ServiceRequest: Equatable, Sendable {
    public var op: String
    public var json: [UInt8]
    /// The correlation line the request came with, without its newline.
    public var requestID: Frame?

    public init(op: String, json: [UInt8], requestID: Frame? = nil) {
        self.op = op
        self.json = json
        self.requestID = requestID
    }

    public var frames: [Frame] { [BodyFrame.write(line: requestID?[...], head: op, rest: json)] }

    public init(frames: [Frame]) throws(ServiceError) {
        guard frames.count == 1, let frame = frames.first else {
            throw .badRequest("bad_request", "a request body is one frame, <op>\\n<JSON params>; got \(frames.count) frames")
        }
        let parts = BodyFrame.read(frame)
        requestID = parts.line.map { Array($0) }
        guard let op = String(validating: parts.head, as: UTF8.self), !op.isEmpty else {
            throw .badRequest("bad_request", "the op is empty or not UTF-8")
        }
        self.op = op
        self.json = parts.rest.isEmpty ? Array("{}".utf8) : Array(parts.rest)
    }

    /// The op a request body names, read without copying its params (the broker's role check);
    /// empty when the body is not a request.
    public static func op(in body: [Frame]) -> String {
        guard body.count == 1, let frame = body.first else { return "" }
        return String(validating: BodyFrame.read(frame).head, as: UTF8.self) ?? ""
    }

    /// The caller's trace context, carried in the correlation line (`RequestID`); nil when none
    /// or malformed — the op then starts a trace of its own.
    public var trace: TraceHeaders? { requestID.flatMap { RequestID.trace(in: $0[...]) } }
}

/// A reply body: one frame, `<status>\n<JSON>`, status as three ASCII digits (`200`, `404`, ...);
/// the request's correlation line, when it had one, is written ahead (the client takes it off).
public struct ServiceReply: Equatable, Sendable {
    public var status: Int
    public var json: [UInt8]

    public init(status: Int, json: [UInt8]) {
        self.status = status
        self.json = json
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    public var frames: [Frame] { [BodyFrame.write(line: nil, head: String(status), rest: json)] }

    /// The reply to `request` (a request body): its correlation line, if it had one, written ahead.
    public func frames(answering request: [Frame]) -> [Frame] {
        let line = request.count == 1 ? request.first.flatMap(RequestID.line(in:)) : nil
        return [BodyFrame.write(line: line, head: String(status), rest: json)]
    }

    public static func error(status: Int, code: String, message: String) -> ServiceReply {
        // Encoding two strings cannot fail; fall back to a fixed text rather than trap if it ever did.
        let json =
            (try? JSONCoding.encode(ErrorBody(code: code, message: message)))
            ?? Array(#"{"error":{"code":"internal","message":"unencodable error"}}"#.utf8)
        return ServiceReply(status: status, json: json)
    }

    public static func error(_ error: ServiceError) -> ServiceReply {
        .error(status: error.status, code: error.code, message: error.message)
    }

    public init(frames: [Frame]) throws(ServiceError) {
        // (a correlation line, if any, was taken off by the client)
        guard frames.count == 1, let frame = frames.first else {
            throw ServiceError(
                status: Status.internalError, code: "bad_reply",
                message: "a reply body is one frame, <status>\\n<JSON>; got \(frames.count) frames")
        }
        let digits = frame.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }), frame.count == 3 || frame[3] == RequestID.lineEnd else {
            throw ServiceError(
                status: Status.internalError, code: "bad_reply", message: "the reply does not start with a 3-digit status and a newline")
        }
        self.status = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
        self.json = frame.count > 4 ? Array(frame[4...]) : []
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

/// The one frame requests and replies share: `[<correlation line>\n]<head>\n<rest>`, the head an op
/// or a status, the rest JSON (it may hold newlines of its own).
private enum BodyFrame {
    static func write(line: ArraySlice<UInt8>?, head: String, rest: [UInt8]) -> Frame {
        var frame: Frame = []
        frame.reserveCapacity((line?.count ?? -1) + 1 + head.utf8.count + 1 + rest.count)
        if let line {
            frame += line
            frame.append(RequestID.lineEnd)
        }
        frame += head.utf8
        frame.append(RequestID.lineEnd)
        frame += rest
        return frame
    }

    /// The parts of `frame`; `rest` is empty when nothing follows the head.
    static func read(_ frame: Frame) -> (line: ArraySlice<UInt8>?, head: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
        let line = RequestID.line(in: frame)
        let afterLine = line.map { frame[($0.endIndex + 1)...] } ?? frame[...]
        let headEnd = afterLine.firstIndex(of: RequestID.lineEnd) ?? afterLine.endIndex
        let rest = headEnd < afterLine.endIndex ? afterLine[(headEnd + 1)...] : afterLine[afterLine.endIndex...]
        return (line, afterLine[..<headEnd], rest)
    }
}
