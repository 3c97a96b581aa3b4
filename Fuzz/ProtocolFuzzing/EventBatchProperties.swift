import Bus

/// Event batches as the bus's forwarder splits them (`EventBatch.split`): a frame is a whole batch
/// whose events, appended again, give back the same bytes, or it is none of it.
enum EventBatchProperties {
    static func check(_ frame: [UInt8], _ findings: inout Findings) {
        guard let events = frame.withUnsafeBytes({ EventBatch.split($0) }) else { return }
        var again = EventBatch.start()
        for (topic, event) in events {
            findings.expect(!topic.isEmpty && topic.count <= 255, "a batch's topic of \(topic.count) bytes: \(frame.shown)")
            EventBatch.append(topic: Array(frame[topic]), event: Array(frame[event]), to: &again)
        }
        findings.expect(again == frame, "a batch split and appended again is not the same bytes: \(frame.shown)")
    }
}
