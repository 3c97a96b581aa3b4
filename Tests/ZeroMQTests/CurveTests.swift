import Foundation
import Synchronization
import Testing

@testable import ZeroMQ

@Suite struct CurveTests {
    @Test func z85MatchesTheRFCExample() throws {
        // ZeroMQ RFC 32's test vector.
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(Z85.encode(bytes) == "HelloWorld")
        #expect(Z85.decode("HelloWorld") == bytes)
        #expect(Z85.decode("Hello") != nil)
        #expect(Z85.decode("Hell") == nil)
        #expect(Z85.encode([1, 2, 3]) == nil)
    }

    @Test func aSecretKeyGivesBackItsPublicHalf() throws {
        let pair = try CurveKeyPair.generate()
        #expect(pair.publicKey.utf8.count == 40 && pair.secretKey.utf8.count == 40)
        #expect(try CurveKeyPair(secretKey: pair.secretKey) == pair)
        #expect(try CurveKeyPair.generate() != pair)
    }

    @Test func textThatIsNotAKeyIsRefusedSayingWhy() {
        #expect(throws: CurveKeyError.notAKey("a CURVE key is 40 Z85 characters, got 5")) { try CurveKeyPair(secretKey: "short") }
        let notZ85 = String(repeating: "\"", count: 40)
        #expect(throws: CurveKeyError.notAKey("'\(notZ85)' is not Z85 text")) { try CurveKeyPair(secretKey: notZ85) }
    }

    @Test func theZAPHandlerAnswersByTheClientsKey() throws {
        let allowed = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let authorizer = AllowedCurveKeys([allowed.publicKey: "orders"])
        func request(mechanism: String, key: CurveKeyPair?) -> [Frame] {
            [Frame(frame: "1.0"), Frame(frame: "7"), Frame(frame: "ride"), Frame(frame: "10.0.0.9"), [], Frame(frame: mechanism)]
                + (key.map { [Z85.decode($0.publicKey)!] } ?? [])
        }
        let admitted = ZAPHandler.answer(request(mechanism: "CURVE", key: allowed), authorizer: authorizer)
        #expect(
            admitted.reply == [Frame(frame: "1.0"), Frame(frame: "7"), Frame(frame: "200"), Frame(frame: "OK"), Frame(frame: "orders"), []])
        #expect(admitted.decision == .init(address: "10.0.0.9", clientKey: allowed.publicKey, clientName: "orders"))

        let refused = ZAPHandler.answer(request(mechanism: "CURVE", key: stranger), authorizer: authorizer)
        #expect(refused.reply[2] == Frame(frame: "400"))
        #expect(refused.decision == .init(address: "10.0.0.9", clientKey: stranger.publicKey, clientName: nil))

        let plain = ZAPHandler.answer(request(mechanism: "NULL", key: nil), authorizer: authorizer)
        #expect(plain.reply[2] == Frame(frame: "400"))
        #expect(plain.decision?.allowed == false)

        let malformed = ZAPHandler.answer([Frame(frame: "2.0"), Frame(frame: "7")], authorizer: authorizer)
        #expect(malformed.reply[1] == Frame(frame: "7") && malformed.reply[2] == Frame(frame: "500"))
        #expect(malformed.decision == nil)
    }

    /// A server context with CURVE and a ZAP handler; clients from their own contexts, as separate
    /// processes would be: the allowed key gets through, an unknown key and a plain client do not.
    @Test func onlyAnAllowedClientReachesACurveServer() async throws {
        let serverKeys = try CurveKeyPair.generate()
        let allowed = try CurveKeyPair.generate()
        let decisions = Mutex<[ZAPHandler.Decision]>([])
        let serverContext = try Context()
        let handler = try await serverContext.enableCurve(
            CurveSecurity(
                identity: serverKeys, serverKey: serverKeys.publicKey, server: serverKeys,
                authorizer: AllowedCurveKeys([allowed.publicKey: "allowed"])),
            onDecision: { decision in decisions.withLock { $0.append(decision) } })
        let server = try Socket(.router, context: serverContext)
        try server.setReceiveTimeout(milliseconds: 1500)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint

        func client(_ identity: CurveKeyPair?) async throws -> (Context, Socket) {
            let context = try Context()
            if let identity { try await context.enableCurve(CurveSecurity(identity: identity, serverKey: serverKeys.publicKey)) }
            let socket = try Socket(.dealer, context: context)
            try socket.connect(endpoint)
            return (context, socket)
        }
        let stranger = try await client(try CurveKeyPair.generate())
        try stranger.1.send(Frame(frame: "from a stranger"))
        let plain = try await client(nil)
        try plain.1.send(Frame(frame: "in plain text"))
        let member = try await client(allowed)
        try member.1.send(Frame(frame: "from a member"))

        // The member's message arrives, with the name its key was admitted under (the broker holds
        // the sender to that name's role); the others' never do.
        let first = try #require(try server.receiveWithSender())
        #expect(first.frames.last == Frame(frame: "from a member"))
        #expect(first.sender == "allowed", "a ROUTER's message names its sender: \(first.sender ?? "nil")")
        #expect(throws: ZMQError.self) { try server.receive() }
        #expect(try server.receive(dontWait: true) == nil)

        let seen = decisions.withLock { $0 }
        #expect(seen.contains { $0.clientKey == allowed.publicKey && $0.clientName == "allowed" })
        #expect(seen.contains { $0.clientKey == stranger.0.curve?.identity.publicKey && !$0.allowed })
        #expect(seen.filter(\.allowed).count == 1)

        // A process with CURVE on but no server key may not listen in plain text.
        #expect(throws: ZMQError.self) { try Socket(.router, context: member.0).bind("tcp://127.0.0.1:*") }
        try Socket(.router, context: member.0).bind("inproc://still-fine")

        for (context, socket) in [stranger, plain, member] {
            socket.close()
            context.terminate()
        }
        server.close()
        await handler?.stop()
        serverContext.terminate()
    }
}
