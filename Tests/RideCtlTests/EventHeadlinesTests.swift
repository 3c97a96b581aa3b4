import Bus
import RideContract
import Testing
import Wire

@testable import RideCtlKit

/// `EventHeadlines` against the contract: every event kind has a headline, and every field of it
/// is a path through the kind's payload schema, so a renamed key fails here, not in an operator's
/// terminal.
@Suite struct EventHeadlinesTests {
    @Test func everyEventKindHasAHeadline() {
        let declared = Set(RideContract.events.map(\.type))
        #expect(declared.subtracting(EventHeadlines.fields.keys).isEmpty, "event types without a headline")
        #expect(Set(EventHeadlines.fields.keys).subtracting(declared).isEmpty, "headlines of types the contract does not declare")
    }

    @Test func everyHeadlineFieldIsInItsPayloadsSchema() throws {
        for event in RideContract.events {
            let payload = try #require(event.payloadType as? any WireValue.Type, "\(event.type)")
            for field in EventHeadlines.fields[event.type] ?? [] {
                #expect(
                    Self.resolves(field.path, in: payload.wireSchema),
                    "\(event.type): \(field.path.joined(separator: ".")) is not in \(payload)")
            }
        }
    }

    static func resolves(_ path: [String], in schema: WireSchema) -> Bool {
        guard let key = path.first else { return true }
        guard case .model(let model) = schema, let property = model.properties.first(where: { $0.key == key }) else { return false }
        return resolves(Array(path.dropFirst()), in: property.schema)
    }
}
