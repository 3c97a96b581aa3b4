import Bus
import Foundation
import RideContract
import RideModels
import Wire

/// An op's params decoded as its router decodes them: they decode, or the reply is a 4xx that
/// says what is wrong — never a 5xx (the request's fault is not the service's).
enum ParamsProperties {
    static func check(_ op: OpParams, _ json: [UInt8], _ findings: inout Findings) {
        do throws(ServiceError) {
            try op.decode(json)
        } catch {
            findings.expect((400..<500).contains(error.status), "\(op.name) answers \(error) to \(json.shown)")
            findings.expect(!error.code.isEmpty && !error.message.isEmpty, "\(op.name) refuses without a code or message: \(json.shown)")
        }
        if op.name == Ops.Tracking.ingest.fullName { checkIngestFastPath(json, &findings) }
    }

    /// The ingest socket decodes batches with the derived one-pass reader, which must agree with
    /// Foundation's JSONDecoder on every input it reads.
    static func checkIngestFastPath(_ json: [UInt8], _ findings: inout Findings) {
        // Giving up (nil) is allowed: the caller then decodes with Foundation, which names the error.
        guard let fast = IngestBatch.readWhole(json) else { return }
        let reference = try? JSONCoding.decoder().decode(IngestBatch.self, from: Data(json))
        findings.expect(
            fast == reference, "the one-pass reader gives \(fast), JSONDecoder \(reference.map { "\($0)" } ?? "an error"): \(json.shown)")
    }
}
