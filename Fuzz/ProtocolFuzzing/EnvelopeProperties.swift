import Bus
import RideContract
import RideModels
import Wire

/// Events as subscribers decode them (`CloudEvent.decode`, strict), with each payload type a
/// service subscribes with.
enum EnvelopeProperties {
    static func check(_ bytes: [UInt8], _ findings: inout Findings) {
        do throws(EnvelopeError) {
            let event = try CloudEvent<JSONValue>.decode(bytes)
            findings.expect(
                !event.id.isEmpty && !event.source.isEmpty && !event.type.isEmpty,
                "decoded an event without id, source or type: \(bytes.shown)")
            checkRoundTrip(event, bytes, &findings)
        } catch {
            expectNamed(error, bytes, &findings)
        }
        decode(DeviceLocationEvent.self, bytes, &findings)
        decode(DeviceCommandEvent.self, bytes, &findings)
        decode(TripEvent.self, bytes, &findings)
        decode(OrderStatusChanged.self, bytes, &findings)
        decode(LifecycleEvent.self, bytes, &findings)
    }

    /// An event accepted is one the platform can pass on (the event log and the forwarder
    /// re-encode events): it encodes, the encoding decodes to the same event — its time to the
    /// millisecond, the precision events are written with — and a second round gives the same bytes.
    static func checkRoundTrip(_ event: CloudEvent<JSONValue>, _ bytes: [UInt8], _ findings: inout Findings) {
        do {
            let first = try event.encoded()
            let again = try CloudEvent<JSONValue>.decode(first)
            let same =
                again.id == event.id && again.source == event.source && again.type == event.type && again.sequence == event.sequence
                && abs(again.time.timeIntervalSince(event.time)) <= 0.000_501 && again.data == event.data && again.trace == event.trace
            findings.expect(same, "the event changed on the way through encoding: \(bytes.shown) became \(first.shown)")
            let second = try again.encoded()
            findings.expect(first == second, "re-encoding is not stable: \(first.shown) then \(second.shown)")
        } catch {
            findings.expect(false, "an accepted event does not survive encoding and decoding (\(error)): \(bytes.shown)")
        }
    }

    static func decode<Payload: Decodable & Sendable>(_ type: Payload.Type, _ bytes: [UInt8], _ findings: inout Findings) {
        do throws(EnvelopeError) {
            _ = try CloudEvent<Payload>.decode(bytes)
        } catch {
            expectNamed(error, bytes, &findings)
        }
    }

    static func expectNamed(_ error: EnvelopeError, _ bytes: [UInt8], _ findings: inout Findings) {
        findings.expect(!error.field.isEmpty && !error.reason.isEmpty, "a refusal that names nothing (\(error)): \(bytes.shown)")
    }
}
