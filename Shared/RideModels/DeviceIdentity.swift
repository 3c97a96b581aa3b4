/// A device id names the device's topics (`device.location.<id>`) and its ingest connection's
/// routing id, so it is 1 to 128 bytes of printable ASCII without spaces.
public enum DeviceIdentity {
    public static let maximumLength = 128

    /// Why `id` cannot be a device id, or nil.
    public static func problem(with id: String) -> String? {
        if id.isEmpty { return "device id is empty" }
        if id.utf8.count > maximumLength { return "device id is longer than \(maximumLength) bytes" }
        if let bad = id.utf8.first(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return "device id: contains a character that is not printable ASCII (byte 0x\(String(bad, radix: 16)))"
        }
        return nil
    }
}
