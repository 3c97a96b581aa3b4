import Bus
import RideContract
import Testing
import Wire

/// The contract's source rule (`Events.sourceRule`), which every subscriber of the platform's
/// processes applies (`EventSubscriber.Options.platform`): each topic from its event kind's source only.
@Suite struct ContractSourceRuleTests {
    @Test func eachTopicComesFromItsPublisherOnly() {
        let rule = EventSubscriber<JSONValue>.Options.platform.sourceRule
        let allowed = [
            ("order.status.COMPLETED", "orders"), ("order.rated", "orders"), ("trip.destination_arrival", "trips"),
            ("device.location.d1", "tracking/devices/d1"), ("device.command.d1", "notifications"), ("user.registered", "users"),
            ("ops.note", "ridectl"),
        ]
        for (topic, source) in allowed { #expect(rule?.problem(topic: topic, source: source) == nil, "\(source) on \(topic)") }
        let refused = [
            ("order.status.COMPLETED", "trips"), ("order.message.o1", "gateway"), ("trip.destination_arrival", "orders"),
            ("device.location.d1", "notifications"), ("device.command.d1", "tracking"), ("notification.u1", "orders/x"),
        ]
        for (topic, source) in refused { #expect(rule?.problem(topic: topic, source: source) != nil, "\(source) on \(topic)") }
        for kind in RideContract.events { #expect(rule?.problem(topic: kind.topic + "x", source: kind.source) == nil, "\(kind.type)") }
    }
}
