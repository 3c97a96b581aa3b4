import Bus
import ZeroMQ

/// 7/MDP framing as the broker, a worker and a client parse it, and the broker's state machine fed
/// the same messages.
enum MDPProperties {
    /// One message of an input: who sent it and its frames (after the routing id).
    struct Message {
        var sender: Frame
        var frames: [Frame]
        /// The broker learns the peer went away (`!` before the sender); `frames` is the lost message.
        var unreachable: Bool
    }

    /// Lines are frames; a line `--` starts the next message, whose first line is its sender. A
    /// unit separator (0x1F) in a line is a newline inside the frame: a body's `<op>\n<JSON>`.
    static func messages(_ payload: [UInt8]) -> [Message] {
        let lines = payload.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.map { $0 == 0x1F ? UInt8(ascii: "\n") : $0 }
        }
        return lines.split(whereSeparator: { $0 == Array("--".utf8) }).compactMap { section in
            guard var sender = section.first else { return nil }
            let unreachable = sender.first == UInt8(ascii: "!")
            if unreachable { sender.removeFirst() }
            return Message(sender: sender, frames: Array(section.dropFirst()), unreachable: unreachable)
        }
    }

    static func check(_ payload: [UInt8], _ findings: inout Findings) {
        var core = BrokerCore(configuration: BrokerConfiguration(), now: 0)
        var out: [BrokerOutgoing] = []
        var now: Int64 = 0
        for message in messages(payload) {
            checkParsers(message.frames, &findings)
            now += 500
            if message.unreachable {
                core.peerUnreachable(message.sender, lostMessage: message.frames, now: now, into: &out)
            } else {
                core.receive(from: message.sender, frames: message.frames[...], now: now, into: &out)
            }
            core.tick(now: now, into: &out)
            for sent in out { checkSent(sent, &findings) }
            out.removeAll(keepingCapacity: true)
            _ = core.takeNotices()
        }
        checkStillServes(&core, now: now, &findings)
    }

    /// Each parser returns a message that encodes back to the same frames in the same envelope (7/MDP's
    /// frames, or packed into one), or throws its `MDPError`
    /// (typed: no other way out); a request's body is a `ServiceRequest` or a 400, a reply's a
    /// `ServiceReply` or the client's `bad_reply`.
    static func checkParsers(_ frames: [Frame], _ findings: inout Findings) {
        let envelope = MDP.envelope(of: frames)
        if let message = try? MDP.parseToBroker(frames[...]) {
            expectSame(encoding(message, envelope), frames, "parseToBroker", &findings)
            switch message {
            case .clientRequest(_, let body): checkRequestBody(body, &findings)
            case .reply(_, let body): checkReplyBody(body, &findings)
            case .ready, .heartbeat, .disconnect: break
            }
        }
        if let message = try? MDP.parseBrokerToWorker(frames) {
            expectSame(encoding(message, envelope), frames, "parseBrokerToWorker", &findings)
            if case .request(_, let body) = message { checkRequestBody(body, &findings) }
        }
        if let (service, body) = try? MDP.parseClientReply(frames) {
            expectSame(
                MDP.clientReply(service: Frame(frame: service), body: body, envelope: envelope), frames, "parseClientReply", &findings)
            checkReplyBody(body, &findings)
        }
    }

    /// A parsed message encodes to the frames it came from; a command without arguments to their
    /// first three (the parsers ignore what follows it).
    static func expectSame(_ encoded: [Frame], _ frames: [Frame], _ parser: String, _ findings: inout Findings) {
        let compared = encoded.count == 3 ? Array(frames.prefix(3)) : frames
        findings.expect(encoded == compared, "\(parser) read \(encoded) from \(frames)")
    }

    static func encoding(_ message: MDP.ToBroker, _ envelope: MDP.Envelope) -> [Frame] {
        switch message {
        case .clientRequest(let service, let body): MDP.clientRequest(service: service, body: body, envelope: envelope)
        case .ready(let service): MDP.ready(service: service, envelope: envelope)
        case .reply(let client, let body): MDP.reply(client: client, body: body, envelope: envelope)
        case .heartbeat: MDP.heartbeat(envelope)
        case .disconnect: MDP.disconnect(envelope)
        }
    }

    static func encoding(_ message: MDP.BrokerToWorker, _ envelope: MDP.Envelope) -> [Frame] {
        switch message {
        case .request(let client, let body): MDP.request(client: client, body: body, envelope: envelope)
        case .heartbeat: MDP.heartbeat(envelope)
        case .disconnect: MDP.disconnect(envelope)
        }
    }

    /// A worker answers a body it cannot read with 400 (`OpRouter`).
    static func checkRequestBody(_ body: [Frame], _ findings: inout Findings) {
        do throws(ServiceError) {
            let request = try ServiceRequest(frames: body)
            // Trace context in the id frame is read or ignored, never refused (docs/tracing.md).
            if let trace = request.trace {
                findings.expect(TraceHeaders.isValid(traceparent: trace.traceparent), "an invalid traceparent read from \(body)")
            }
        } catch {
            findings.expect(error.status == Status.badRequest && !error.message.isEmpty, "a request body refused with \(error): \(body)")
        }
    }

    /// A client refuses a reply body it cannot read with its own `bad_reply` error.
    static func checkReplyBody(_ body: [Frame], _ findings: inout Findings) {
        do throws(ServiceError) {
            _ = try ServiceReply(frames: body)
        } catch {
            findings.expect(error.code == "bad_reply" && !error.message.isEmpty, "a reply body refused with \(error): \(body)")
        }
    }

    /// Whatever the broker sends is well-formed 7/MDP: a worker's command or a client's reply.
    static func checkSent(_ sent: BrokerOutgoing, _ findings: inout Findings) {
        let toWorker = (try? MDP.parseBrokerToWorker(sent.frames)) != nil
        let toClient = (try? MDP.parseClientReply(sent.frames)) != nil
        findings.expect(toWorker || toClient, "the broker sent a malformed message to \(sent.to): \(sent.frames)")
    }

    /// After any input, a new worker and client (ids and a service no input can spell: a frame never
    /// holds a newline) are served: the request reaches the worker, the reply the client.
    static func checkStillServes(_ core: inout BrokerCore, now: Int64, _ findings: inout Findings) {
        let worker = Frame(frame: "\nworker")
        let client = Frame(frame: "\nclient")
        let service = "fuzz\ncheck"
        var out: [BrokerOutgoing] = []
        core.receive(from: worker, frames: MDP.ready(service: service)[...], now: now, into: &out)
        out.removeAll()
        core.receive(from: client, frames: MDP.clientRequest(service: service, body: [Array("op".utf8)])[...], now: now, into: &out)
        let request = out.first { $0.to == worker }.flatMap { try? MDP.parseBrokerToWorker($0.frames) }
        guard case .request(let replyTo, let body)? = request, body == [Array("op".utf8)] else {
            findings.expect(false, "after this input a new worker did not get a new client's request: \(out)")
            return
        }
        out.removeAll()
        core.receive(from: worker, frames: MDP.reply(client: replyTo, body: [Array("200".utf8)])[...], now: now, into: &out)
        let reply = out.first { $0.to == client }.flatMap { try? MDP.parseClientReply($0.frames) }
        findings.expect(
            reply?.service == service && reply?.body == [Array("200".utf8)], "after this input the reply did not reach the client: \(out)")
    }
}
