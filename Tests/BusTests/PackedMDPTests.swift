import Testing
import ZeroMQ

@testable import Bus

private func f(_ s: String) -> Frame { Frame(frame: s) }

@Suite struct PackedMDPFrameTests {
    @Test func eachMessagePacksIntoOneFrame() {
        #expect(MDP.clientRequest(service: "echo", body: [f("a")], envelope: .packed) == [f("MDPC01") + [4] + f("echo") + f("a")])
        #expect(MDP.clientReply(service: f("echo"), body: [f("x")], envelope: .packed) == [f("MDPC01") + [4] + f("echo") + f("x")])
        #expect(MDP.ready(service: "echo", envelope: .packed) == [f("MDPW01") + [0x01] + f("echo")])
        #expect(MDP.request(client: [9, 9], body: [f("op")], envelope: .packed) == [f("MDPW01") + [0x02, 2, 9, 9] + f("op")])
        #expect(MDP.reply(client: [9], body: [f("200")], envelope: .packed) == [f("MDPW01") + [0x03, 1, 9] + f("200")])
        #expect(MDP.heartbeat(.packed) == [f("MDPW01") + [0x04]])
        #expect(MDP.disconnect(.packed) == [f("MDPW01") + [0x05]])
        #expect(MDP.heartbeat(.standard) == MDP.heartbeat() && MDP.disconnect(.standard) == MDP.disconnect())
    }

    @Test func aBodyOfOtherThanOneFrameOrANameOverItsLengthByteStaysStandard() {
        let long = String(repeating: "s", count: 256)
        #expect(
            MDP.clientRequest(service: "echo", body: [f("a"), f("b")], envelope: .packed) == [[], f("MDPC01"), f("echo"), f("a"), f("b")])
        #expect(MDP.clientRequest(service: "echo", body: [], envelope: .packed) == [[], f("MDPC01"), f("echo")])
        #expect(MDP.clientRequest(service: long, body: [f("a")], envelope: .packed) == [[], f("MDPC01"), f(long), f("a")])
        #expect(MDP.request(client: [], body: [f("a")], envelope: .packed) == [[], f("MDPW01"), [0x02], [], [], f("a")])
    }

    @Test func itReadsWhatItPacksAndTellsTheEnvelopeApart() throws {
        let request = MDP.clientRequest(service: "echo", body: [f("r1\nop\n{}")], envelope: .packed)
        #expect(MDP.envelope(of: request) == .packed)
        #expect(MDP.envelope(of: MDP.clientRequest(service: "echo", body: [f("x")])) == .standard)
        #expect(try MDP.parseToBroker(request[...]) == .clientRequest(service: "echo", body: [f("r1\nop\n{}")]))
        #expect(try MDP.parseToBroker(MDP.ready(service: "users", envelope: .packed)[...]) == .ready(service: "users"))
        #expect(
            try MDP.parseToBroker(MDP.reply(client: [1, 2], body: [f("200\n{}")], envelope: .packed)[...])
                == .reply(client: [1, 2], body: [f("200\n{}")]))
        #expect(try MDP.parseToBroker(MDP.heartbeat(.packed)[...]) == .heartbeat)
        #expect(try MDP.parseToBroker(MDP.disconnect(.packed)[...]) == .disconnect)
        #expect(
            try MDP.parseBrokerToWorker(MDP.request(client: [7], body: [f("ping")], envelope: .packed))
                == .request(client: [7], body: [f("ping")]))
        #expect(try MDP.parseBrokerToWorker(MDP.heartbeat(.packed)) == .heartbeat)
        #expect(try MDP.parseBrokerToWorker(MDP.disconnect(.packed)) == .disconnect)
        #expect(try MDP.parseClientReply(MDP.clientReply(service: f("echo"), body: [f("ok")], envelope: .packed)) == ("echo", [f("ok")]))
        // An empty body frame is a body all the same.
        #expect(try MDP.parseClientReply(MDP.clientReply(service: f("echo"), body: [[]], envelope: .packed)) == ("echo", [[]]))
    }

    @Test(
        arguments: [
            ([f("x")], MDPError.wrongHeader(f("x"))),
            ([f("MDP")], MDPError.wrongHeader(f("MDP"))),
            ([f("MDPX01") + [1, 65]], MDPError.wrongHeader(f("MDPX01"))),
            ([f("MDPC01")], MDPError.truncated("a packed message's service name is missing or longer than the message")),
            ([f("MDPC01") + [0] + f("op")], MDPError.truncated("a packed message's service name is missing or longer than the message")),
            ([f("MDPC01") + [5] + f("echo")], MDPError.truncated("a packed message's service name is missing or longer than the message")),
            ([f("MDPC01") + [2, 0xFF, 0xFE]], MDPError.invalidServiceName),
            ([f("MDPW01")], MDPError.truncated("a packed worker message needs a command")),
            ([f("MDPW01") + [0x09]], MDPError.unknownCommand([0x09])),
            ([f("MDPW01") + [0x04, 0]], MDPError.truncated("a packed HEARTBEAT has nothing after its command")),
            ([f("MDPW01") + [0x01]], MDPError.invalidServiceName),
            ([f("MDPW01") + [0x01, 0xFF]], MDPError.invalidServiceName),
            ([f("MDPW01") + [0x02, 1, 7]], MDPError.unexpectedCommand(.request)),
            ([f("MDPW01") + [0x03]], MDPError.truncated("a packed message's client id is missing or longer than the message")),
            ([f("MDPW01") + [0x03, 3, 1]], MDPError.truncated("a packed message's client id is missing or longer than the message")),
            // Two frames are never packed: a first frame that is not the delimiter is 7/MDP broken.
            ([f("MDPC01") + [1, 65], f("x")], MDPError.missingDelimiter),
        ] as [([Frame], MDPError)])
    func theBrokerRefusesBrokenPackedMessagesNamingWhy(frames: [Frame], expected: MDPError) {
        #expect(throws: expected) { try MDP.parseToBroker(frames[...]) }
    }

    @Test func aWorkerAndAClientRefuseWhatIsNotForThem() {
        #expect(throws: MDPError.unexpectedCommand(.reply)) {
            try MDP.parseBrokerToWorker(MDP.reply(client: [1], body: [f("200")], envelope: .packed))
        }
        #expect(throws: MDPError.wrongHeader(f("MDPC01"))) {
            try MDP.parseBrokerToWorker(MDP.clientReply(service: f("s"), body: [f("x")], envelope: .packed))
        }
        #expect(throws: MDPError.wrongHeader(f("MDPW01"))) { try MDP.parseClientReply(MDP.heartbeat(.packed)) }
    }
}

@Suite struct PackedBrokerTests {
    let client: Frame = [0xC1]
    let packedClient: Frame = [0xC2]
    let worker: Frame = [0xA1]

    func send(_ core: inout BrokerCore, from: Frame, key: String? = nil, _ frames: [Frame], at now: Int64 = 0) -> [BrokerOutgoing] {
        var out: [BrokerOutgoing] = []
        core.receive(from: from, key: key, frames: frames[...], now: now, into: &out)
        return out
    }

    @Test func eachClientIsAnsweredAsItAskedAndEachWorkerSentRequestsAsItLastWrote() {
        var core = BrokerCore(now: 0)
        #expect(send(&core, from: worker, MDP.ready(service: "echo")) == [BrokerOutgoing(to: worker, frames: MDP.heartbeat())])
        // A packed heartbeat: the worker reads packed requests from now on.
        #expect(send(&core, from: worker, MDP.heartbeat(.packed)).isEmpty)
        #expect(
            send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("1")]))
                == [BrokerOutgoing(to: worker, frames: MDP.request(client: client, body: [f("1")], envelope: .packed))])
        #expect(
            send(&core, from: worker, MDP.reply(client: client, body: [f("200")], envelope: .packed))
                == [BrokerOutgoing(to: client, frames: MDP.clientReply(service: f("echo"), body: [f("200")]))])
        #expect(
            send(&core, from: packedClient, MDP.clientRequest(service: "echo", body: [f("2")], envelope: .packed))
                == [BrokerOutgoing(to: worker, frames: MDP.request(client: packedClient, body: [f("2")], envelope: .packed))])
        // The worker answers in 7/MDP's frames now (another broker's habits): so are its next requests.
        #expect(
            send(&core, from: worker, MDP.reply(client: packedClient, body: [f("200")]))
                == [BrokerOutgoing(to: packedClient, frames: MDP.clientReply(service: f("echo"), body: [f("200")], envelope: .packed))])
        #expect(
            send(&core, from: packedClient, MDP.clientRequest(service: "echo", body: [f("3")], envelope: .packed))
                == [BrokerOutgoing(to: worker, frames: MDP.request(client: packedClient, body: [f("3")]))])
        // Packed: two requests, and the first reply.
        #expect(core.stats.requests == 3 && core.stats.packed == 3)
        var out: [BrokerOutgoing] = []
        core.tick(now: 2500, into: &out)
        #expect(out == [BrokerOutgoing(to: worker, frames: MDP.heartbeat())])
    }

    @Test func theBrokersOwnAnswersToAPackedClientArePacked() throws {
        var core = BrokerCore(now: 0)
        let mmi = send(&core, from: packedClient, MDP.clientRequest(service: "mmi.service", body: [f("echo")], envelope: .packed))
        #expect(
            mmi == [
                BrokerOutgoing(to: packedClient, frames: MDP.clientReply(service: f("mmi.service"), body: [f("404")], envelope: .packed))
            ])
        _ = send(&core, from: packedClient, MDP.clientRequest(service: "nobody", body: [f("r9\nop\n{}")], envelope: .packed))
        var out: [BrokerOutgoing] = []
        core.tick(now: 10_000, into: &out)
        let expired = try #require(out.first)
        #expect(expired.to == packedClient && MDP.envelope(of: expired.frames) == .packed)
        let (id, body) = try #require(RequestID.split(try MDP.parseClientReply(expired.frames).body))
        #expect(id == 9)
        #expect(try ServiceReply(frames: body).serviceError?.code == "no_worker")
    }

    @Test func aPackedRequestIsHeldToItsKeysRoleAsAnyOther() throws {
        var configuration = BrokerConfiguration()
        configuration.policy = BusPolicy(roles: [
            "users": BusPermissions(serves: ["users"]), "gateway": BusPermissions(calls: ["users": ["login"]]),
        ])
        var core = BrokerCore(configuration: configuration, now: 0)
        #expect(
            send(&core, from: worker, key: "gateway", MDP.ready(service: "users", envelope: .packed))
                == [BrokerOutgoing(to: worker, frames: MDP.disconnect(.packed))])
        _ = send(&core, from: worker, key: "users", MDP.ready(service: "users"))
        let refused = send(
            &core, from: packedClient, key: "gateway",
            MDP.clientRequest(service: "users", body: [f("r7\nissue_device_credential\n{}")], envelope: .packed))
        #expect(refused.count == 1 && refused[0].to == packedClient && MDP.envelope(of: refused[0].frames) == .packed)
        let (_, body) = try #require(RequestID.split(try MDP.parseClientReply(refused[0].frames).body))
        #expect(try ServiceReply(frames: body).status == 403)
        #expect(core.workerCount(service: "users") == 1 && core.stats.services["users"]?.idle == 1)
    }

    @Test func aBrokenPackedWorkerIsToldToGoAwayAndALostPackedRequestGoesToAnother() {
        var core = BrokerCore(now: 0)
        _ = send(&core, from: worker, MDP.ready(service: "echo"))
        _ = send(&core, from: worker, MDP.heartbeat(.packed))
        #expect(send(&core, from: worker, [f("MDPW01") + [0x09]]) == [BrokerOutgoing(to: worker, frames: MDP.disconnect(.packed))])
        #expect(core.workerCount(service: "echo") == 0 && core.stats.malformed == 1)

        let second: Frame = [0xA2]
        _ = send(&core, from: worker, MDP.ready(service: "echo"))
        _ = send(&core, from: worker, MDP.heartbeat(.packed))
        let lost = send(&core, from: client, MDP.clientRequest(service: "echo", body: [f("x")]))
        var out: [BrokerOutgoing] = []
        // The REQUEST never left: giving it to the next worker is no retry.
        core.peerUnreachable(worker, lostMessage: lost[0].frames, now: 1, into: &out)
        #expect(core.stats.requeued == 0)
        #expect(
            send(&core, from: second, MDP.ready(service: "echo")) == [
                BrokerOutgoing(to: second, frames: MDP.heartbeat()),
                BrokerOutgoing(to: second, frames: MDP.request(client: client, body: [f("x")])),
            ])
    }
}
