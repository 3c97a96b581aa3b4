import Wire
import ZeroMQ

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

/// A reply body on the wire: one frame; the request's correlation line, when it had one, is
/// written ahead (the client takes it off).
extension ServiceReply {
    public var frames: [Frame] { [BodyFrame.write(line: nil, head: String(status), rest: json)] }

    /// The reply to `request` (a request body): its correlation line, if it had one, written ahead.
    public func frames(answering request: [Frame]) -> [Frame] {
        let line = request.count == 1 ? request.first.flatMap(RequestID.line(in:)) : nil
        return [BodyFrame.write(line: line, head: String(status), rest: json)]
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
        self.init(status: digits.reduce(0) { $0 * 10 + Int($1 - 48) }, json: frame.count > 4 ? Array(frame[4...]) : [])
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
