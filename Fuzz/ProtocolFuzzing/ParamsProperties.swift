import Bus
import RideModels

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
        if op.name == "tracking.ingest" { checkIngestFastPath(json, &findings) }
    }

    /// The ingest socket decodes batches with a fast path that must agree with JSONDecoder (the
    /// op's decoder) on every input: the same batch, or both refuse.
    static func checkIngestFastPath(_ json: [UInt8], _ findings: inout Findings) {
        let reference = try? JSONCoding.decode(IngestBatch.self, from: json)
        let fast = try? IngestBatch.decode(from: json)
        findings.expect(fast == reference, "IngestBatch.decode gives \(fast.map { "\($0)" } ?? "an error"), JSONDecoder \(reference.map { "\($0)" } ?? "an error"): \(json.shown)")
    }
}
