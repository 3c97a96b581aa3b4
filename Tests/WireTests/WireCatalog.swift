import Bus
import RideContract
import TripsService
import Wire

/// Every wire type of the platform, for the property test: the params, replies and event payloads
/// the contract declares and every model they contain, found by walking their schemas — plus the
/// documents a service stores that are not on the bus.
enum WireCatalog {
    static let stored: [any WireValue.Type] = [TripProgress.self]

    static let cases: [WireCase] = {
        let roots: [any Any.Type] =
            RideContract.ops.flatMap { [$0.paramsType, $0.replyType] } + RideContract.events.map(\.payloadType) + stored
        var seen: Set<ObjectIdentifier> = []
        var found: [any WireValue.Type] = []
        func add(_ type: any WireValue.Type) {
            guard seen.insert(ObjectIdentifier(type)).inserted else { return }
            found.append(type)
            if case .model(let model) = type.wireSchema { for property in model.properties { visit(property.schema) } }
        }
        func visit(_ schema: WireSchema) {
            switch schema {
            case .array(let element), .map(let element): visit(element)
            case .model(let model): add(model.type)
            default: break
            }
        }
        for case let type as any WireValue.Type in roots { add(type) }
        return found.map { WireCase.of($0) }
    }()
}
