import Testing
import ZeroMQ

@testable import Bus

private func f(_ s: String) -> Frame { Frame(frame: s) }

@Suite struct MDPFrameTests {
    @Test func encodesExactlyAsRFC7() {
        #expect(MDP.clientRequest(service: "echo", body: [f("a")]) == [[], f("MDPC01"), f("echo"), f("a")])
        #expect(MDP.ready(service: "echo") == [[], f("MDPW01"), [0x01], f("echo")])
        #expect(MDP.request(client: [9, 9], body: [f("op"), f("{}")]) == [[], f("MDPW01"), [0x02], [9, 9], [], f("op"), f("{}")])
        #expect(MDP.reply(client: [9], body: [f("200")]) == [[], f("MDPW01"), [0x03], [9], [], f("200")])
        #expect(MDP.heartbeat() == [[], f("MDPW01"), [0x04]])
        #expect(MDP.disconnect() == [[], f("MDPW01"), [0x05]])
        #expect(MDP.clientReply(service: f("echo"), body: [f("x")]) == [[], f("MDPC01"), f("echo"), f("x")])
    }

    @Test func decodesWhatItEncodes() throws {
        #expect(
            try MDP.parseToBroker(MDP.clientRequest(service: "echo", body: [f("a"), f("b")])[...])
                == .clientRequest(service: "echo", body: [f("a"), f("b")]))
        #expect(try MDP.parseToBroker(MDP.ready(service: "users")[...]) == .ready(service: "users"))
        #expect(
            try MDP.parseToBroker(MDP.reply(client: [1, 2], body: [f("200"), f("{}")])[...])
                == .reply(client: [1, 2], body: [f("200"), f("{}")]))
        #expect(try MDP.parseToBroker(MDP.heartbeat()[...]) == .heartbeat)
        #expect(try MDP.parseToBroker(MDP.disconnect()[...]) == .disconnect)
        #expect(try MDP.parseBrokerToWorker(MDP.request(client: [7], body: [f("ping")])) == .request(client: [7], body: [f("ping")]))
        #expect(try MDP.parseBrokerToWorker(MDP.heartbeat()) == .heartbeat)
        #expect(try MDP.parseClientReply(MDP.clientReply(service: f("echo"), body: [f("ok")])) == ("echo", [f("ok")]))
    }

    @Test(
        arguments: [
            ([], MDPError.truncated("empty message")),
            ([f("x"), f("y")], MDPError.missingDelimiter),
            ([[]], MDPError.truncated("no protocol header after the delimiter")),
            ([[], f("MDPX01")], MDPError.wrongHeader(f("MDPX01"))),
            ([[], f("MDPC01")], MDPError.truncated("a client request needs a service name")),
            ([[], f("MDPC01"), []], MDPError.invalidServiceName),
            ([[], f("MDPC01"), [0xFF, 0xFE]], MDPError.invalidServiceName),
            ([[], f("MDPW01"), [0x09]], MDPError.unknownCommand([0x09])),
            ([[], f("MDPW01"), [0x01, 0x01]], MDPError.unknownCommand([0x01, 0x01])),
            ([[], f("MDPW01"), [0x01]], MDPError.invalidServiceName),
            ([[], f("MDPW01"), [0x02], [1], []], MDPError.unexpectedCommand(.request)),
            ([[], f("MDPW01"), [0x03], [1]], MDPError.truncated("REPLY needs [client][\"\"][body...]")),
            ([[], f("MDPW01"), [0x03], [1], [1]], MDPError.truncated("REPLY needs [client][\"\"][body...]")),
            ([[], f("MDPW01")], MDPError.truncated("a worker message needs [\"\"][MDPW01][command]; got 2 frames")),
        ] as [([Frame], MDPError)])
    func rejectsBrokenMessages(frames: [Frame], expected: MDPError) {
        #expect(throws: expected) { try MDP.parseToBroker(frames[...]) }
    }
}

@Suite struct BrokerCoreTests {
    let client: Frame = [0xC1]
    let w1: Frame = [0xA1]
    let w2: Frame = [0xA2]

    func broker(_ configure: (inout BrokerConfiguration) -> Void = { _ in }) -> BrokerCore {
        var configuration = BrokerConfiguration()
        configure(&configuration)
        return BrokerCore(configuration: configuration, now: 0)
    }

    func send(_ core: inout BrokerCore, from: Frame, _ frames: [Frame], at now: Int64 = 0) -> [BrokerOutgoing] {
        var out: [BrokerOutgoing] = []
        core.receive(from: from, frames: frames[...], now: now, into: &out)
        return out
    }

    @Test func dispatchesToAReadyWorkerAndRoutesTheReply() {
        var core = broker()
        // READY is answered with a heartbeat at once: the worker knows it is registered.
        #expect(send(&core, from: w1, MDP.ready(service: "echo")) == [BrokerOutgoing(to: w1, frames: MDP.heartbeat())])
        let toWorker = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("hi")]))
        #expect(toWorker == [BrokerOutgoing(to: w1, frames: MDP.request(client: client, body: [f("hi")]))])
        let toClient = send(&core, from: w1, MDP.reply(client: client, body: [f("200"), f("{}")]))
        #expect(toClient == [BrokerOutgoing(to: client, frames: MDP.clientReply(service: f("echo"), body: [f("200"), f("{}")]))])
        #expect(core.stats.services["echo"]?.idle == 1)
    }

    @Test func queuesUntilAWorkerArrivesAndSpreadsOverWorkers() {
        var core = broker()
        #expect(send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("1")])).isEmpty)
        #expect(send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("2")])).isEmpty)
        #expect(core.stats.services["echo"]?.queued == 2)
        // Each new worker gets its heartbeat, then a waiting request.
        #expect(
            send(&core, from: w1, MDP.ready(service: "echo")) == [
                BrokerOutgoing(to: w1, frames: MDP.heartbeat()),
                BrokerOutgoing(to: w1, frames: MDP.request(client: client, body: [f("1")])),
            ])
        #expect(send(&core, from: w2, MDP.ready(service: "echo")).map(\.to) == [w2, w2])
        #expect(core.stats.services["echo"]?.queued == 0)
    }

    @Test func answersMMIService() {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        #expect(
            send(&core, from: client, MDP.clientRequest(service: "mmi.service", body: [f("echo")]))
                == [BrokerOutgoing(to: client, frames: MDP.clientReply(service: f("mmi.service"), body: [f("200")]))])
        #expect(send(&core, from: client, MDP.clientRequest(service: "mmi.service", body: [f("nobody")])).first?.frames.last == f("404"))
        #expect(send(&core, from: client, MDP.clientRequest(service: "mmi.other", body: [])).first?.frames.last == f("501"))
    }

    @Test func disconnectsUnknownWorkers() {
        var core = broker()
        #expect(send(&core, from: w1, MDP.heartbeat()) == [BrokerOutgoing(to: w1, frames: MDP.disconnect())])
        #expect(send(&core, from: w1, MDP.reply(client: client, body: [f("200")])) == [BrokerOutgoing(to: w1, frames: MDP.disconnect())])
        #expect(send(&core, from: w2, [[], f("MDPW01"), [0x07]]) == [BrokerOutgoing(to: w2, frames: MDP.disconnect())])
        #expect(!core.isWorker(w1))
    }

    @Test func aSecondReadyIsAProtocolError() {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        #expect(send(&core, from: w1, MDP.ready(service: "echo")) == [BrokerOutgoing(to: w1, frames: MDP.disconnect())])
        #expect(core.workerCount(service: "echo") == 0)
        #expect(send(&core, from: w2, MDP.ready(service: "mmi.service")) == [BrokerOutgoing(to: w2, frames: MDP.disconnect())])
    }

    @Test func expiresSilentWorkersAndRequeuesTheirRequest() {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"), at: 0)
        _ = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("job")]), at: 0)
        var out: [BrokerOutgoing] = []
        // Heartbeats at 2.5 s and 5 s; w1 has been silent since 0 and expires at 7.5 s.
        core.tick(now: 2500, into: &out)
        #expect(out == [BrokerOutgoing(to: w1, frames: MDP.heartbeat())], "busy workers get heartbeats too")
        out = []
        core.tick(now: 5000, into: &out)
        _ = send(&core, from: w2, MDP.ready(service: "echo"), at: 5000)
        out = []
        core.tick(now: 7500, into: &out)
        #expect(out.contains(BrokerOutgoing(to: w1, frames: MDP.disconnect())))
        #expect(out.contains(BrokerOutgoing(to: w2, frames: MDP.request(client: client, body: [f("job")]))), "requeued to the live worker")
        #expect(core.workerCount(service: "echo") == 1)
        #expect(core.stats.expiredWorkers == 1)
        #expect(core.stats.requeued == 1)
        #expect(core.takeNotices().contains(.workerExpired(service: "echo", worker: w1)))
    }

    @Test func heartbeatsKeepWorkersAlive() {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"), at: 0)
        var out: [BrokerOutgoing] = []
        for now in stride(from: Int64(2500), through: 30_000, by: 2500) {
            _ = send(&core, from: w1, MDP.heartbeat(), at: now - 100)
            core.tick(now: now, into: &out)
        }
        #expect(core.workerCount(service: "echo") == 1)
        #expect(!out.contains(BrokerOutgoing(to: w1, frames: MDP.disconnect())))
    }

    @Test func anUnreachableWorkerLosesItsRequestToAnother() {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        _ = send(&core, from: w2, MDP.ready(service: "echo"))
        let first = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("job")]))
        #expect(first.map(\.to) == [w1])
        var out: [BrokerOutgoing] = []
        core.peerUnreachable(w1, now: 1, into: &out)
        #expect(out == [BrokerOutgoing(to: w2, frames: MDP.request(client: client, body: [f("job")]))])
    }

    @Test func aRequestThatNeverReachedADeadWorkerIsNotCountedAsARetry() throws {
        var core = broker()
        let dead: [Frame] = [[0xD1], [0xD2], [0xD3]]
        for worker in dead { _ = send(&core, from: worker, MDP.ready(service: "echo")) }
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        var out = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("job")]))
        // Every dead worker refuses the REQUEST in turn (EHOSTUNREACH); the live one gets it.
        var hops = 0
        while let message = out.first, message.to != w1 {
            out.removeFirst()
            core.peerUnreachable(message.to, lostMessage: message.frames, now: 1, into: &out)
            hops += 1
        }
        #expect(hops == 3)
        #expect(out.first == BrokerOutgoing(to: w1, frames: MDP.request(client: client, body: [f("job")])))
        #expect(core.stats.requeued == 0)
    }

    @Test func aRequestLostTwiceIsAnswered503() throws {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        _ = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("job")]))
        var out: [BrokerOutgoing] = []
        core.peerUnreachable(w1, now: 1, into: &out)
        #expect(out.isEmpty, "requeued, waiting for a worker")
        out = send(&core, from: w2, MDP.ready(service: "echo"))
        core.peerUnreachable(w2, now: 2, into: &out)
        let reply = try #require(out.last)
        #expect(reply.to == client)
        let parsed = try MDP.parseClientReply(reply.frames)
        let body = try ServiceReply(frames: parsed.body)
        #expect(body.status == 503)
        #expect(body.serviceError?.code == "worker_lost")
    }

    @Test func theBrokersOwnErrorRepliesEchoTheRequestID() throws {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        _ = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("r7\nop\n{}")]))
        var out: [BrokerOutgoing] = []
        core.peerUnreachable(w1, now: 1, into: &out)
        out = send(&core, from: w2, MDP.ready(service: "echo"))
        core.peerUnreachable(w2, now: 2, into: &out)
        let reply = try MDP.parseClientReply(try #require(out.last).frames)
        #expect(reply.body.count == 1)
        let (id, body) = try #require(RequestID.split(reply.body), "a multiplexing client can match the 503 to its request")
        #expect(id == 7)
        #expect(try ServiceReply(frames: body).serviceError?.code == "worker_lost")
    }

    @Test func requestsThatWaitTooLongAreAnswered503() throws {
        var core = broker { $0.requestTimeToLive = 5000 }
        _ = send(&core, from: client, MDP.clientRequest(service: "nobody", body: [f("x")]), at: 0)
        var out: [BrokerOutgoing] = []
        core.tick(now: 2500, into: &out)
        #expect(out.isEmpty)
        core.tick(now: 5000, into: &out)
        let reply = try ServiceReply(frames: MDP.parseClientReply(try #require(out.first).frames).body)
        #expect(reply.status == 503)
        #expect(reply.serviceError?.code == "no_worker")
        #expect(core.stats.services["nobody"]?.queued == 0)
    }

    @Test func aFullQueueRejects() throws {
        var core = broker { $0.maxQueuedPerService = 2 }
        _ = send(&core, from: client, MDP.clientRequest(service: "s", body: []))
        _ = send(&core, from: client, MDP.clientRequest(service: "s", body: []))
        let out = send(&core, from: client, MDP.clientRequest(service: "s", body: []))
        let reply = try ServiceReply(frames: MDP.parseClientReply(try #require(out.first).frames).body)
        #expect(reply.serviceError?.code == "queue_full")
    }

    @Test func garbageIsCountedAndIgnored() {
        var core = broker()
        #expect(send(&core, from: client, [f("random"), [0, 1, 2]]).isEmpty)
        #expect(send(&core, from: client, []).isEmpty)
        #expect(send(&core, from: client, [[], f("MDPC02"), f("x")]).isEmpty)
        #expect(core.stats.malformed == 3)
    }

    /// A worker may answer only the client whose request it holds: a REPLY naming another client
    /// reaches no one, the worker is told to go, and the request goes to the next worker.
    @Test func aReplyToAnotherClientReachesNobodyAndTheRequestGoesToTheNextWorker() throws {
        var core = broker()
        let victim: Frame = [0xC9]
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        _ = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("mine")]))
        let forged = send(&core, from: w1, MDP.reply(client: victim, body: [f("200\n{\"forged\":true}")]))
        #expect(forged == [BrokerOutgoing(to: w1, frames: MDP.disconnect())])
        #expect(!core.isWorker(w1) && core.stats.malformed == 1 && core.stats.requeued == 1)
        let next = send(&core, from: w2, MDP.ready(service: "echo"))
        #expect(next.last == BrokerOutgoing(to: w2, frames: MDP.request(client: client, body: [f("mine")])))
        #expect(send(&core, from: w2, MDP.reply(client: client, body: [f("200")])).map(\.to) == [client])
    }

    @Test func aWorkerSayingDisconnectIsForgotten() {
        var core = broker()
        _ = send(&core, from: w1, MDP.ready(service: "echo"))
        #expect(send(&core, from: w1, MDP.disconnect()).isEmpty)
        #expect(core.workerCount(service: "echo") == 0)
    }
}

@Suite struct ServiceMessageTests {
    @Test func requestFrames() throws {
        #expect(try ServiceRequest(frames: [f(#"get\#n{"id":1}"#)]) == ServiceRequest(op: "get", json: Array(#"{"id":1}"#.utf8)))
        #expect(try ServiceRequest(frames: [f("ping")]).json == Array("{}".utf8))
        #expect(try ServiceRequest(frames: [f("ping\n")]).json == Array("{}".utf8))
        #expect(try ServiceRequest(frames: [f("get\n{\n}")]).json == Array("{\n}".utf8), "a newline inside the JSON is the JSON's")
        #expect(throws: ServiceError.self) { try ServiceRequest(frames: []) }
        let correlated = try ServiceRequest(frames: [f("r42\nget\n{}")])
        #expect(correlated == ServiceRequest(op: "get", json: Array("{}".utf8), requestID: f("r42")), "a correlation line ahead")
        #expect(correlated.frames == [f("r42\nget\n{}")])
        #expect(ServiceRequest.op(in: [f("r42 00-trace\nget\n{}")]) == "get")
        #expect(ServiceRequest.op(in: [f("get\n{}")]) == "get")
        #expect(ServiceRequest.op(in: [f("get"), f("{}")]) == "", "two frames are no request")
        #expect(try ServiceRequest(frames: [f("r2d2\n{}")]).op == "r2d2", "an op is no correlation line")
        #expect(throws: ServiceError.self) { try ServiceRequest(frames: [f("get"), f("{}")]) }
        #expect(throws: ServiceError.self) { try ServiceRequest(frames: [[]]) }
        #expect(throws: ServiceError.self) { try ServiceRequest(frames: [f("r42\n")]) }
        #expect(throws: ServiceError.self) { try ServiceRequest(frames: [[0xFF, 0x0A]]) }
    }

    @Test func replyFrames() throws {
        let reply = ServiceReply.error(status: 409, code: "taken", message: "phone number taken")
        #expect(reply.frames.count == 1)
        #expect(reply.frames[0].starts(with: Array("409\n".utf8)))
        #expect(String(decoding: reply.json, as: UTF8.self) == #"{"error":{"code":"taken","message":"phone number taken"}}"#)
        let back = try ServiceReply(frames: reply.frames)
        #expect(back.serviceError == ServiceError(status: 409, code: "taken", message: "phone number taken"))
        #expect(reply.frames(answering: [f("r9 00-x\nop\n{}")])[0].starts(with: Array("r9 00-x\n409\n".utf8)), "the line written back")
        #expect(reply.frames(answering: [f("op\n{}")]) == reply.frames)
        #expect(try ServiceReply(frames: [f("200")]) == ServiceReply(status: 200, json: []))
        #expect(throws: ServiceError.self) { try ServiceReply(frames: [f("20\n{}")]) }
        #expect(throws: ServiceError.self) { try ServiceReply(frames: [f("2000\n{}")]) }
        #expect(throws: ServiceError.self) { try ServiceReply(frames: [f("200"), f("{}")]) }
    }
}
