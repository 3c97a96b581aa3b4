import Testing
import ZeroMQ

@testable import Bus

private func f(_ s: String) -> Frame { Frame(frame: s) }

@Suite struct BusPermissionsTests {
    let tracking = BusPermissions(
        serves: ["tracking", "tracking.shard.*"], calls: ["users": ["get"], "tracking.shard.*": []],
        publishes: ["device.location.", "device.status."],
        subscribes: ["device.command."])

    @Test func servesItsOwnServicesAndPatternsOnly() {
        #expect(tracking.mayServe("tracking") && tracking.mayServe("tracking.shard.3"))
        #expect(!tracking.mayServe("users") && !tracking.mayServe("trackingx") && !tracking.mayServe("tracking.shard"))
    }

    @Test func callsTheOpsItNamesOrEveryOpOfAService() {
        #expect(tracking.mayCall("users", op: "get"))
        #expect(!tracking.mayCall("users", op: "issue_device_credential"))
        #expect(tracking.mayCall("tracking.shard.1", op: "anything"))
        #expect(!tracking.mayCall("orders", op: "get"))
    }

    @Test func publishesUnderItsPrefixesByTheTopicsBytes() {
        #expect(tracking.mayPublish(topic: "device.location.d-1"))
        #expect(!tracking.mayPublish(topic: "device.locatio"))
        #expect(!tracking.mayPublish(topic: "order.status.COMPLETED"))
        #expect(!tracking.mayPublish(topic: ""))
        #expect(BusPermissions.everything.mayPublish(topic: ""))
    }

    @Test func subscribesOnlyAtLeastAsNarrowlyAsAllowed() {
        #expect(tracking.maySubscribe("device.command.") && tracking.maySubscribe("device.command.d-1"))
        #expect(!tracking.maySubscribe("device.comm"), "a shorter prefix would hear more than allowed")
        #expect(!tracking.maySubscribe(""))
        #expect(BusPermissions.everything.maySubscribe(""))
    }
}

@Suite struct BusPolicyTests {
    let policy = BusPolicy(roles: [
        "orders": BusPermissions(serves: ["orders"], calls: ["trips": ["create"]], publishes: ["order."], subscribes: ["order."]),
        "operator": BusPermissions(calls: ["*": []], subscribes: [""]),
    ])

    @Test func aKeysRoleIsItsNameOrWhatComesBeforeTheFirstDash() {
        #expect(BusPolicy.roleName(ofKey: "orders") == "orders")
        #expect(BusPolicy.roleName(ofKey: "operator-ana") == "operator")
        #expect(BusPolicy.roleName(ofKey: "operator-ana-2") == "operator")
        #expect(policy.permissions(ofKey: "operator-ana") == policy.roles["operator"])
        #expect(policy.permissions(ofKey: "stranger") == nil)
    }

    @Test func refusalsNameTheKeyTheRoleAndTheAction() throws {
        #expect(policy.refusal(of: .serve(service: "orders"), by: "orders") == nil)
        #expect(policy.refusal(of: .call(service: "trips", op: "create"), by: "orders") == nil)
        #expect(policy.refusal(of: .call(service: "users", op: "login"), by: "operator-ana") == nil)

        let serve = try #require(policy.refusal(of: .serve(service: "users"), by: "operator-ana"))
        #expect(serve.reason == "key 'operator-ana' (role operator) may not serve 'users'")
        #expect(serve.role == "operator" && serve.action.kind == "serve")

        let call = try #require(policy.refusal(of: .call(service: "users", op: "issue_device_credential"), by: "orders"))
        #expect(call.reason.contains("may not call users.issue_device_credential"))

        let stranger = try #require(policy.refusal(of: .publish(topic: "order.status.COMPLETED"), by: "stranger"))
        #expect(stranger.reason.contains("key 'stranger' has no role"))

        let anonymous = try #require(policy.refusal(of: .subscribe(prefix: ""), by: nil))
        #expect(anonymous.role == "none" && anonymous.reason.contains("no CURVE key name"))
        #expect(
            policy.refusal(of: .subscribe(prefix: ""), by: "orders")?.reason
                == "key 'orders' (role orders) may not subscribe to every topic")
    }
}

@Suite struct SubscriptionLedgerTests {
    let everything: [UInt8] = []
    let orders = Array("order.".utf8)

    @Test func anAllowedSubscriptionGoesUpstreamUntilItsLastHolderLeaves() {
        var ledger = SubscriptionLedger()
        let passed = [ledger.subscribed(orders, allowed: true), ledger.subscribed(orders, allowed: true)]
        #expect(passed == [true, true] && ledger.upstream(orders) == 2)
        let ended = [ledger.unsubscribed(orders, wasAllowed: true), ledger.unsubscribed(orders, wasAllowed: nil)]
        #expect(ended == [true, true] && ledger.upstream(orders) == 0)
        let extra = ledger.unsubscribed(orders, wasAllowed: nil)
        #expect(!extra, "nothing left to take away")
    }

    /// A refused subscriber that leaves makes libzmq send an unsubscription with no sender: it must
    /// not take away the allowed subscriber's subscription upstream.
    @Test func aRefusedSubscriberLeavingNeverCancelsAnAllowedOne() {
        var ledger = SubscriptionLedger()
        let operatorTail = ledger.subscribed(everything, allowed: true)
        let intruder = ledger.subscribed(everything, allowed: false)
        #expect(operatorTail && !intruder)
        let intruderLeft = ledger.unsubscribed(everything, wasAllowed: nil)
        #expect(!intruderLeft && ledger.upstream(everything) == 1, "the intruder left: taken from the refused count")
        let operatorLeft = ledger.unsubscribed(everything, wasAllowed: nil)
        #expect(operatorLeft && ledger.upstream(everything) == 0)
    }

    /// Whoever leaves first, the count upstream never falls below the allowed subscribers left.
    @Test(arguments: [[true, false, true], [false, true, true], [true, true, false]])
    func theUpstreamCountCoversTheAllowedHoldersLeft(leaving order: [Bool]) {
        var ledger = SubscriptionLedger()
        for allowed in [true, false, true] { _ = ledger.subscribed(orders, allowed: allowed) }
        var allowedLeft = 2
        for leaver in order {
            _ = ledger.unsubscribed(orders, wasAllowed: nil)
            if leaver { allowedLeft -= 1 }
            #expect(ledger.upstream(orders) >= allowedLeft)
        }
        #expect(ledger.upstream(orders) == 0)
    }

    @Test func anOwnUnsubscriptionOfARefusedPrefixNeverGoesUpstream() {
        var ledger = SubscriptionLedger()
        _ = ledger.subscribed(everything, allowed: true)
        _ = ledger.subscribed(everything, allowed: false)
        let ended = [ledger.unsubscribed(everything, wasAllowed: false), ledger.unsubscribed(everything, wasAllowed: false)]
        #expect(ended == [false, false], "more refused unsubscriptions than subscriptions change nothing")
        #expect(ledger.upstream(everything) == 1)
    }
}

@Suite struct BrokerPolicyTests {
    let client: Frame = [0xC1]
    let worker: Frame = [0xA1]
    let policy = BusPolicy(roles: [
        "users": BusPermissions(serves: ["users"]),
        "gateway": BusPermissions(calls: ["users": ["login"]]),
    ])

    func send(_ core: inout BrokerCore, from: Frame, key: String?, _ frames: [Frame]) -> [BrokerOutgoing] {
        var out: [BrokerOutgoing] = []
        core.receive(from: from, key: key, frames: frames[...], now: 0, into: &out)
        return out
    }

    func core() -> BrokerCore {
        var configuration = BrokerConfiguration()
        configuration.policy = policy
        return BrokerCore(configuration: configuration, now: 0)
    }

    @Test func aKeyThatMayNotServeIsToldToDisconnectAndNeverRegisters() {
        var core = core()
        #expect(
            send(&core, from: worker, key: "gateway", MDP.ready(service: "users")) == [BrokerOutgoing(to: worker, frames: MDP.disconnect())]
        )
        #expect(core.workerCount(service: "users") == 0 && !core.isWorker(worker))
        #expect(core.stats.refused == [RefusalCount(BusRefusal(action: .serve(service: "users"), key: "gateway", reason: "")): 1])
        let notices = core.takeNotices()
        #expect(notices.count == 1)
        if case .refused(let refusal)? = notices.first {
            #expect(refusal.reason == "key 'gateway' (role gateway) may not serve 'users'")
        } else {
            Issue.record("expected a refusal notice, got \(notices)")
        }
        #expect(
            send(&core, from: worker, key: "users", MDP.ready(service: "users")) == [BrokerOutgoing(to: worker, frames: MDP.heartbeat())])
        #expect(core.workerCount(service: "users") == 1)
    }

    @Test func aRequestItsKeyMayNotMakeIsAnswered403WithTheReasonAndReachesNoWorker() throws {
        var core = core()
        _ = send(&core, from: worker, key: "users", MDP.ready(service: "users"))
        let refused = send(
            &core, from: client, key: "gateway", MDP.clientRequest(service: "users", body: [f("r7\nissue_device_credential\n{}")]))
        #expect(refused.count == 1 && refused[0].to == client)
        let (service, echoed) = try MDP.parseClientReply(refused[0].frames)
        let (id, body) = try #require(RequestID.split(echoed))
        #expect(service == "users" && id == 7)
        let reply = try ServiceReply(frames: body)
        #expect(reply.status == 403)
        #expect(reply.serviceError?.message.contains("may not call users.issue_device_credential") == true)

        let allowed = send(&core, from: client, key: "gateway", MDP.clientRequest(service: "users", body: [f("r7\nlogin\n{}")]))
        #expect(allowed == [BrokerOutgoing(to: worker, frames: MDP.request(client: client, body: [f("r7\nlogin\n{}")]))])
    }

    @Test func aConnectionWithoutAKeyNameIsRefusedButAnyoneMayAskTheBrokerItself() {
        var core = core()
        let refused = send(&core, from: client, key: nil, MDP.clientRequest(service: "users", body: [f("login\n{}")]))
        #expect(
            refused.count == 1
                && (try? MDP.parseClientReply(refused[0].frames).body).flatMap { try? ServiceReply(frames: $0).status } == 403)
        let mmi = send(&core, from: client, key: nil, MDP.clientRequest(service: "mmi.service", body: [f("users")]))
        #expect((try? MDP.parseClientReply(mmi[0].frames).body) == [f("404")])
    }

    @Test func withoutAPolicyEveryPeerMayDoEverything() {
        var core = BrokerCore(configuration: BrokerConfiguration(), now: 0)
        #expect(send(&core, from: worker, key: nil, MDP.ready(service: "users")) == [BrokerOutgoing(to: worker, frames: MDP.heartbeat())])
        #expect(core.stats.refused.isEmpty)
    }
}

@Suite struct PublishGateTests {
    let policy = BusPolicy(roles: ["orders": BusPermissions(publishes: ["order."])])

    func admits(_ gate: inout PublishGate, _ topic: String, _ sender: String?) -> Bool {
        Array(topic.utf8).withUnsafeBytes { topicBytes in
            guard let sender else { return gate.admits(topic: topicBytes, sender: nil) }
            return sender.withCString { gate.admits(topic: topicBytes, sender: $0) }
        }
    }

    @Test func onlyTheTopicsPublisherRoleGetsThrough() {
        var gate = PublishGate(policy: policy)
        #expect(admits(&gate, "order.status.COMPLETED", "orders"))
        #expect(admits(&gate, "order.status.NEW", "orders-2"))
        #expect(!admits(&gate, "order.status.COMPLETED", "gateway"))
        #expect(gate.lastRefusal?.reason == "key 'gateway' has no role (roles: orders)")
        #expect(!admits(&gate, "trip.created", "orders"))
        #expect(gate.lastRefusal?.reason == "key 'orders' (role orders) may not publish on 'trip.created'")
        #expect(!admits(&gate, "order.status.NEW", nil))
        #expect(admits(&gate, "order.paid", "orders"), "the cached key's answer holds after a refusal")
    }
}

@Suite struct HeldRoleTests {
    let trips = HeldRole(name: "trips", permissions: BusPermissions(calls: ["tracking": ["device"]], subscribes: ["device.location."]))

    @Test func aCallOrSubscriptionTheRoleMayNotMakeIsRefusedWithTheReason() throws {
        #expect(trips.refusal(toCall: "tracking", op: "device") == nil)
        #expect(trips.refusal(toCall: "mmi.service", op: "") == nil)
        let call = try #require(trips.refusal(toCall: "users", op: "issue_device_credential"))
        #expect(call.reason == "this process (role trips) may not call users.issue_device_credential: see RideContract.Roles")
        #expect(trips.refusal(toSubscribe: "device.location.d-1") == nil)
        #expect(trips.refusal(toSubscribe: "order.")?.action == .subscribe(prefix: "order."))
    }
}
