import Bus
import RideContract
import ServiceKit
import Testing

/// The roles of a secured bus (`RideContract.Roles`) against the rest of the contract: every key
/// `ridectl keys init` makes has a role, every topic one publisher, every service one server.
struct RolesTests {
    @Test func theKeysInitMakesAreTheRoles() {
        #expect(CurveKeyDirectory.standardClients.sorted() == Roles.all.map(\.name).sorted())
    }

    @Test func everyEventKindHasOnePublishingRoleAndNoRolePublishesAnotherServicesTopics() {
        for event in RideContract.events {
            let publishers = Roles.all.filter { $0.permissions.mayPublish(topic: event.topic + "x") }
            #expect(publishers.map(\.name) == [event.source], "\(event.topic) is published by \(publishers.map(\.name))")
        }
    }

    @Test func everyServiceIsServedByItsOwnRoleOnly() {
        for service in BusContract.Service.all {
            #expect(Roles.all.filter { $0.permissions.mayServe(service) }.map(\.name) == [service])
        }
        #expect(
            Roles.all.filter { $0.permissions.mayServe(BusContract.Service.trackingShard(3)) }.map(\.name) == [BusContract.Service.tracking]
        )
    }

    /// The gateway faces the internet: none of the operators' bus-only ops, no worker, no event.
    @Test func theGatewayMayNotDoWhatOnlyOperatorsDo() {
        let gateway = Roles.gateway.permissions
        let operatorOnly: [OpDescriptor] = [
            Ops.Users.issueDeviceCredential.descriptor, Ops.Users.verifyDeviceCredential.descriptor,
            Ops.Notifications.registerWebhook.descriptor,
            Ops.Notifications.listWebhooks.descriptor, Ops.Notifications.replay.descriptor,
        ]
        for op in operatorOnly {
            #expect(!gateway.mayCall(op.service, op: op.name), "\(op.fullName)")
            #expect(Roles.operator.permissions.mayCall(op.service, op: op.name))
        }
        #expect(gateway.serves.isEmpty && Roles.gateway.publishes.isEmpty)
        #expect(
            !Roles.operator.permissions.mayPublish(topic: "order.status.COMPLETED")
                && Roles.operator.permissions.mayPublish(topic: "ops.note"))
    }

    @Test func everyRoleMayPingAnyServiceAndHearTheBusWelcome() {
        for role in Roles.all {
            #expect(role.permissions.mayCall("users", op: "ping") && role.permissions.maySubscribe(EventForwarder.welcome), "\(role.name)")
        }
    }
}
