import Foundation
import Testing

@testable import ZeroMQ

/// What the bus's policy stands on: each received message names the key its sender was admitted
/// under; a socket may admit any key; an egress may apply each subscriber's subscriptions by hand;
/// an oversized message never arrives.
@Suite struct SenderIdentityTests {
    /// A CURVE server context admitting `allowed` (named), and a client context per key.
    struct Secured {
        let server: Context
        let serverKeys: CurveKeyPair
        let handler: ZAPHandler?

        init(allowed: [String: String]) async throws {
            serverKeys = try CurveKeyPair.generate()
            server = try Context()
            handler = try await server.enableCurve(
                CurveSecurity(
                    identity: serverKeys, serverKey: serverKeys.publicKey, server: serverKeys, authorizer: AllowedCurveKeys(allowed)))
        }

        func client(_ keys: CurveKeyPair) async throws -> Context {
            let context = try Context()
            try await context.enableCurve(CurveSecurity(identity: keys, serverKey: serverKeys.publicKey))
            return context
        }
    }

    @Test func eachMessageNamesTheKeyItsSenderWasAdmittedUnder() async throws {
        let orders = try CurveKeyPair.generate()
        let secured = try await Secured(allowed: [orders.publicKey: "orders"])
        let router = try Socket(.router, context: secured.server)
        try router.setReceiveTimeout(milliseconds: 5000)
        try router.bind("tcp://127.0.0.1:*")
        let clientContext = try await secured.client(orders)
        let dealer = try Socket(.dealer, context: clientContext)
        try dealer.connect(try router.lastEndpoint)
        try dealer.send(message: [Frame(frame: "hello")])
        let received = try #require(try router.receiveWithSender())
        #expect(received.sender == "orders" && received.frames.last == Frame(frame: "hello"))

        // Without ZAP (inproc, or a plain bus) there is no name.
        let plain = try Socket(.router)
        try plain.bind("inproc://no-names")
        let plainDealer = try Socket(.dealer)
        try plainDealer.connect("inproc://no-names")
        try plainDealer.send(Frame(frame: "x"))
        let unnamed = try #require(try plain.receiveWithSender())
        #expect(unnamed.sender == nil)
        for socket in [router, dealer, plain, plainDealer] { socket.close() }
        clientContext.terminate()
        await secured.handler?.stop()
        secured.server.terminate()
    }

    /// What the broker announces in ZMTP's handshake (ride-bus: that it reads packed requests)
    /// reaches its peers on every message, over CURVE as over a plain connection.
    @Test func aPropertyASocketAnnouncesArrivesWithEachMessageFromIt() async throws {
        let orders = try CurveKeyPair.generate()
        let secured = try await Secured(allowed: [orders.publicKey: "orders"])
        let clientContext = try await secured.client(orders)
        for (serverContext, dealerContext) in [(secured.server, clientContext), (Context.shared, Context.shared)] {
            let router = try Socket(.router, context: serverContext)
            try router.setMetadata("X-Test", "announced")
            try router.setReceiveTimeout(milliseconds: 5000)
            try router.bind("tcp://127.0.0.1:*")
            let dealer = try Socket(.dealer, context: dealerContext)
            try dealer.setReceiveTimeout(milliseconds: 5000)
            try dealer.connect(try router.lastEndpoint)
            try dealer.send(Frame(frame: "hello"))
            let asked = try #require(try router.receive(property: "X-Test"))
            #expect(asked.value == nil, "the dealer announced nothing")
            try router.send(message: [asked.frames[0], Frame(frame: "hi")])
            let answer = try #require(try dealer.receive(property: "X-Test"))
            #expect(answer.frames == [Frame(frame: "hi")] && answer.value == "announced")
            router.close()
            dealer.close()
        }
        #expect(throws: ZMQError.self, "libzmq wants X- names") { try Socket(.router).setMetadata("Test", "x") }
        clientContext.terminate()
        await secured.handler?.stop()
        secured.server.terminate()
    }

    @Test func aSocketThatAdmitsAnyKeyTakesAStrangerAsAnonymous() async throws {
        let secured = try await Secured(allowed: [:])
        let open = try Socket(.router, context: secured.server)
        open.admitsAnyCurveKey = true
        try open.setReceiveTimeout(milliseconds: 5000)
        try open.bind("tcp://127.0.0.1:*")
        let closed = try Socket(.router, context: secured.server)
        try closed.setReceiveTimeout(milliseconds: 1000)
        try closed.bind("tcp://127.0.0.1:*")
        let strangerContext = try await secured.client(try CurveKeyPair.generate())
        let toOpen = try Socket(.dealer, context: strangerContext)
        try toOpen.connect(try open.lastEndpoint)
        let toClosed = try Socket(.dealer, context: strangerContext)
        try toClosed.connect(try closed.lastEndpoint)
        try toOpen.send(Frame(frame: "phone"))
        try toClosed.send(Frame(frame: "phone"))
        #expect(try open.receiveWithSender()?.sender == ZAPHandler.anonymousName)
        #expect(throws: ZMQError.self) { try closed.receive() }
        for socket in [open, closed, toOpen, toClosed] { socket.close() }
        strangerContext.terminate()
        await secured.handler?.stop()
        secured.server.terminate()
    }

    @Test func manualSubscriptionsTakeEffectOnlyWhenApplied() throws {
        let xpub = try Socket(.xpub)
        try xpub.setManualSubscriptions(true)
        try xpub.bind("inproc://manual")
        let allowed = try Socket(.sub)
        try allowed.subscribe("a.")
        try allowed.connect("inproc://manual")
        let refused = try Socket(.sub)
        try refused.subscribe("")
        try refused.connect("inproc://manual")
        var seen: [Frame] = []
        for _ in 0..<200 where seen.count < 2 {
            guard let message = try xpub.receive(dontWait: true) else {
                usleep(5000)
                continue
            }
            seen.append(message[0])
            if message[0] == [1] + Array("a.".utf8) { try xpub.applySubscription(message[0]) }  // "" is never applied
        }
        #expect(Set(seen) == [[1] + Array("a.".utf8), [1]])
        try xpub.send(message: [Frame(frame: "a.x"), Frame(frame: "1")])
        try xpub.send(message: [Frame(frame: "b.x"), Frame(frame: "2")])
        try allowed.setReceiveTimeout(milliseconds: 2000)
        #expect(try allowed.receive() == [Frame(frame: "a.x"), Frame(frame: "1")])
        #expect(try refused.receive(dontWait: true) == nil, "a subscription never applied hears nothing")
        for socket in [xpub, allowed, refused] { socket.close() }
    }

    @Test func aMessageOverTheLimitNeverArrivesAndTheSocketGoesOn() throws {
        let router = try Socket(.router)
        try router.setMaximumMessageSize(1000)
        try router.setReceiveTimeout(milliseconds: 1000)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint
        let big = try Socket(.dealer)
        try big.connect(endpoint)
        try big.send(Frame(repeating: 1, count: 2000))
        #expect(throws: ZMQError.self) { try router.receive() }
        let small = try Socket(.dealer)
        try small.connect(endpoint)
        try small.send(Frame(frame: "small"))
        #expect(try router.receive()?.last == Frame(frame: "small"))
        for socket in [router, big, small] { socket.close() }
    }
}
