/// Topics are dot paths (`order.status.ACCEPTED`, `device.location.<device id>`), subscribed by prefix.
/// ZeroMQ filters at the publisher, so a subscriber to `device.location.42` costs nothing for other devices.
public enum Topic {
    /// Longest topic we accept, in bytes.
    public static let maximumLength = 255

    /// Why `topic` cannot be used, or nil when it can: non-empty, at most 255 bytes, printable ASCII
    /// without spaces (device and order ids are UUIDs or similar).
    public static func problem(with topic: String) -> String? {
        if topic.isEmpty { return "topic is empty" }
        if topic.utf8.count > maximumLength { return "topic is longer than \(maximumLength) bytes" }
        if let bad = topic.utf8.first(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return "topic contains a character that is not printable ASCII (byte 0x\(String(bad, radix: 16)))"
        }
        return nil
    }

    /// Per-entity topics: `prefix` + id, e.g. `device.location.` + `42`.
    public static func path(_ prefix: String, _ id: String) -> String { prefix + id }
}
