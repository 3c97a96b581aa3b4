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
        let admitted = ZAPHandler.answer(request(mechanism: "CURVE", key: allowed), authorizer: authorizer, local: nil)
        #expect(
            admitted.reply == [Frame(frame: "1.0"), Frame(frame: "7"), Frame(frame: "200"), Frame(frame: "OK"), Frame(frame: "orders"), []])
        #expect(admitted.decision == .init(address: "10.0.0.9", clientKey: allowed.publicKey, clientName: "orders"))

        let refused = ZAPHandler.answer(request(mechanism: "CURVE", key: stranger), authorizer: authorizer, local: nil)
        #expect(refused.reply[2] == Frame(frame: "400"))
        #expect(
            refused.decision
                == .init(address: "10.0.0.9", clientKey: stranger.publicKey, clientName: nil, refusal: "its key is not allowed"))

        let plain = ZAPHandler.answer(request(mechanism: "NULL", key: nil), authorizer: authorizer, local: nil)
        #expect(plain.reply[2] == Frame(frame: "400"))
        #expect(plain.decision?.allowed == false)

        let malformed = ZAPHandler.answer([Frame(frame: "2.0"), Frame(frame: "7")], authorizer: authorizer, local: nil)
        #expect(malformed.reply[1] == Frame(frame: "7") && malformed.reply[2] == Frame(frame: "500"))
        #expect(malformed.decision == nil)
    }

    /// Over `ipc://` a client proves its key once, in a PLAIN handshake: the ZAP handler admits the
    /// proof its key makes for this server, from a peer running as an allowed user, and nothing else.
    @Test func aLocalProofAdmitsOnlyTheKeysHolderRunningAsAnAllowedUser() throws {
        let server = try CurveKeyPair.generate()
        let allowed = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let authorizer = AllowedCurveKeys([allowed.publicKey: "orders"])
        let local = ZAPHandler.LocalPeers(server: server, users: [1000])
        func request(address: String = "localhost:1000:1000:4242", key: String, proof: String) -> [Frame] {
            [Frame(frame: "1.0"), Frame(frame: "7"), Frame(frame: "ride"), Frame(frame: address), [], Frame(frame: "PLAIN")]
                + [Frame(frame: key), Frame(frame: proof)]
        }
        func answer(_ request: [Frame]) -> ZAPHandler.Decision? {
            ZAPHandler.answer(request, authorizer: authorizer, local: local).decision
        }
        let proof = try LocalProof.proof(identity: allowed, serverKey: server.publicKey)

        let admitted = ZAPHandler.answer(request(key: allowed.publicKey, proof: proof), authorizer: authorizer, local: local)
        #expect(admitted.reply[2] == Frame(frame: "200") && admitted.reply[4] == Frame(frame: "orders"))
        // The proof is bound to both keys: another key, another server, or a guess does not pass.
        #expect(answer(request(key: stranger.publicKey, proof: proof))?.refusal == "local proof does not match the key")
        let forOtherServer = try LocalProof.proof(identity: allowed, serverKey: try CurveKeyPair.generate().publicKey)
        #expect(answer(request(key: allowed.publicKey, proof: forOtherServer))?.refusal == "local proof does not match the key")
        #expect(answer(request(key: allowed.publicKey, proof: String(repeating: "0", count: 40)))?.allowed == false)
        #expect(answer(request(key: allowed.publicKey, proof: "not z85 at all"))?.allowed == false)
        // A key that proves itself but has no role is refused as over CURVE.
        let strangersOwn = try LocalProof.proof(identity: stranger, serverKey: server.publicKey)
        #expect(answer(request(key: stranger.publicKey, proof: strangersOwn))?.refusal == "its key is not allowed")
        // The kernel's word on the peer's user decides before the proof is looked at; TCP has none.
        let otherUser = answer(request(address: "localhost:1001:1000:4242", key: allowed.publicKey, proof: proof))
        #expect(otherUser?.refusal == "a local peer must run as this process's user")
        #expect(answer(request(address: "10.0.0.9", key: allowed.publicKey, proof: proof))?.allowed == false)
        // The server's side derives the same proof: the client's secret key is never needed to check it.
        #expect(LocalProof.verify(Array(proof.utf8), clientKey: allowed.publicKey, server: server))
        #expect(LocalProof.peerUser(address: "localhost:0:0:7214") == 0)
    }

    /// A server context with CURVE and a ZAP handler; clients from their own contexts, as separate
    /// processes would be: the allowed key gets through, an unknown key, a plain client and one
    /// that forges a local proof do not. The server listens on TCP and IPC on one socket (libzmq
    /// copies the mechanism into each endpoint as it binds); the clients use `transport`.
    @Test(arguments: ["tcp", "ipc"]) func onlyAnAllowedClientReachesACurveServer(transport: String) async throws {
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
        let tcp = try server.lastEndpoint
        let ipc = "ipc://\(FileManager.default.temporaryDirectory.path)/curve-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        try server.bind(ipc)
        let endpoint = transport == "tcp" ? tcp : ipc

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
        // A forger names the allowed key in a PLAIN handshake without its secret half.
        let forgerContext = try Context()
        let forger = try Socket(.dealer, context: forgerContext)
        try forger.setPlainCredentials(user: allowed.publicKey, password: String(repeating: "0", count: 40))
        try forger.connect(endpoint)
        try forger.send(Frame(frame: "forged"))
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

        if transport == "ipc" {
            #expect(seen.contains { $0.clientKey == allowed.publicKey && $0.refusal == "local proof does not match the key" })
        }

        for (context, socket) in [stranger, plain, member, (forgerContext, forger)] {
            socket.close()
            context.terminate()
        }
        server.close()
        await handler?.stop()
        serverContext.terminate()
    }
}
