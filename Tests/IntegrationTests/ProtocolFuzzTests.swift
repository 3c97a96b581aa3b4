import Bus
import Foundation
import Testing
import Wire
import ZeroMQ

/// Property-based fuzzing of what arrives from sockets (in process; the ops' fuzzing, through the
/// real services, is in `BadInputIntegrationTests`): the event envelope, MDP framing and the
/// broker's state machine, fed mutations of valid messages and random bytes from a seeded
/// generator (the seed is in each failure message, so a failure replays). The properties: no
/// crash; every input is either understood or refused with the protocol's own error; the broker
/// keeps serving a well-formed request after any of it.
@Suite struct ProtocolFuzzTests {
    static let event = Array(
        #"{"specversion":"1.0","id":"e-1","source":"orders","type":"order.status","time":"2026-11-21T12:00:00.000Z","sequence":"42","datacontenttype":"application/json","data":{"order":{"id":"o-1","status":"NEW"},"previous_status":null}}"#
            .utf8)

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func theEnvelopeDecoderUnderstandsOrRefusesEveryInput(seed: UInt64) {
        var random = FuzzGenerator(state: seed)
        var decoded = 0
        var refused = 0
        for round in 0..<3000 {
            var input = Self.event
            for _ in 0..<Int.random(in: 1...4, using: &random) { input = FuzzGenerator.mutate(input, &random) }
            if round % 10 == 0 {
                input = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            do {
                let event = try CloudEvent<JSONValue>.decode(input)
                #expect(
                    !event.id.isEmpty && !event.source.isEmpty, "seed \(seed) round \(round): \(String(decoding: input, as: UTF8.self))")
                decoded += 1
            } catch {
                #expect(!error.field.isEmpty && !error.reason.isEmpty, "seed \(seed) round \(round)")
                refused += 1
            }
        }
        #expect(decoded > 0 && refused > 1000, "both kinds seen: \(decoded) decoded, \(refused) refused")
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func mdpParsersUnderstandOrRefuseEveryMessage(seed: UInt64) {
        var random = FuzzGenerator(state: seed)
        let valid: [[Frame]] = [
            MDP.ready(service: "orders"), MDP.heartbeat(), MDP.disconnect(),
            MDP.reply(client: [0xC1, 0x02], body: [Array("r3\n200\n{}".utf8)]),
            MDP.request(client: [0xC1], body: [Array("r3\nget\n{\"id\":1}".utf8)]),
            MDP.clientRequest(service: "orders", body: [Array("get\n{}".utf8)]),
            MDP.clientReply(service: Array("orders".utf8), body: [Array("200\n{}".utf8)]),
        ]
        for round in 0..<5000 {
            var frames = valid.randomElement(using: &random)!
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !frames.isEmpty: frames.remove(at: Int.random(in: 0..<frames.count, using: &random))
            case 1: frames.insert(FuzzGenerator.mutate([], &random), at: Int.random(in: 0...frames.count, using: &random))
            case 2 where !frames.isEmpty:
                let index = Int.random(in: 0..<frames.count, using: &random)
                frames[index] = FuzzGenerator.mutate(frames[index], &random)
            default: frames = (0..<Int.random(in: 0...5, using: &random)).map { _ in FuzzGenerator.mutate([], &random) }
            }
            // Each parser either returns a message or throws its typed MDPError (no other way out).
            _ = try? MDP.parseToBroker(frames[...])
            _ = try? MDP.parseBrokerToWorker(frames)
            _ = try? MDP.parseClientReply(frames)
            _ = round
        }
    }

    /// The broker's core fed garbage from many peers between real traffic: it never traps, and a
    /// well-formed request still reaches a ready worker and its reply the client.
    @Test(arguments: [21, 22] as [UInt64])
    func theBrokerKeepsServingAfterGarbage(seed: UInt64) {
        var random = FuzzGenerator(state: seed)
        var core = BrokerCore(configuration: BrokerConfiguration(), now: 0)
        var out: [BrokerOutgoing] = []
        var now: Int64 = 0
        for _ in 0..<4000 {
            now += Int64.random(in: 0...50, using: &random)
            let sender: Frame = [UInt8.random(in: 0...15, using: &random)]
            var frames: [Frame] = MDP.clientRequest(service: "echo", body: [Array("op".utf8)])
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                if frames.isEmpty || Bool.random(using: &random) {
                    frames.insert(FuzzGenerator.mutate([], &random), at: Int.random(in: 0...frames.count, using: &random))
                } else {
                    let index = Int.random(in: 0..<frames.count, using: &random)
                    frames[index] = FuzzGenerator.mutate(frames[index], &random)
                }
            }
            core.receive(from: sender, frames: frames[...], now: now, into: &out)
            if Int.random(in: 0..<20, using: &random) == 0 { core.tick(now: now, into: &out) }
            out.removeAll(keepingCapacity: true)
        }
        // Then real traffic: a fresh worker and client (ids no garbage used).
        let worker: Frame = [0xEE, 0x01]
        let client: Frame = [0xEE, 0x02]
        core.receive(from: worker, frames: MDP.ready(service: "fresh")[...], now: now, into: &out)
        out.removeAll()
        core.receive(from: client, frames: (MDP.clientRequest(service: "fresh", body: [Array("op".utf8)]))[...], now: now, into: &out)
        #expect(
            out.contains { $0.to == worker && (try? MDP.parseBrokerToWorker($0.frames)) != nil },
            "the request reached the worker (seed \(seed)): \(out)")
        let request = out.first { $0.to == worker }.flatMap { try? MDP.parseBrokerToWorker($0.frames) }
        guard case .request(let replyTo, _)? = request else { return }
        out.removeAll()
        core.receive(from: worker, frames: MDP.reply(client: replyTo, body: [Array("200".utf8)])[...], now: now, into: &out)
        #expect(out.contains { $0.to == client }, "and the reply reached the client (seed \(seed))")
    }
}

/// SplitMix64 and one random change to a body: flip, drop, insert, truncate, duplicate a slice, or
/// splice in a JSON token that decoders find hard.
struct FuzzGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func mutate(_ bytes: [UInt8], _ random: inout FuzzGenerator) -> [UInt8] {
        var out = bytes
        let tokens = [
            "null", "\"", "{", "}", "[", "]", ",", ":", "1e999", "-1", "0.5", "\"\\u0000\"", "\"\\ud800\"", "true", "99999999999999999999",
            String(repeating: "[", count: 300), "\"" + String(repeating: "x", count: 5000) + "\"", "é",
        ].map { Array($0.utf8) }
        let position = out.isEmpty ? 0 : Int.random(in: 0..<out.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where !out.isEmpty: out[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
        case 1 where !out.isEmpty: out.remove(at: position)
        case 2: out.insert(UInt8.random(in: 0...255, using: &random), at: position)
        case 3: out = Array(out.prefix(position))
        case 4 where !out.isEmpty:
            let end = min(out.count, position + Int.random(in: 1...16, using: &random))
            out.insert(contentsOf: out[position..<end], at: position)
        default: out.insert(contentsOf: tokens.randomElement(using: &random)!, at: position)
        }
        return out
    }
}
