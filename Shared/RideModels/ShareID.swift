/// Share ids: characters of an alphabet without look-alikes (no 0/O, 1/l/I), so a share URL read
/// aloud or typed from a screen works. A trip's (HyperTrack's per-trip page) has 7, 55^7 ≈ 1.5 ×
/// 10^12; a ride's — the link a rider sends family — 20, 55^20 ≈ 2^115, beyond guessing.
public enum ShareID {
    static let alphabet = Array("23456789abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ")
    public static let tripLength = 7
    public static let rideLength = 20

    public static func make(length: Int = tripLength) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    public static func isValid(_ text: String, length: Int = tripLength) -> Bool {
        text.count == length && text.allSatisfy { alphabet.contains($0) }
    }

    /// A ride's share id: 20 letters, or 7 for a link made before rides had longer ones.
    public static func isValidRide(_ text: String) -> Bool { isValid(text, length: rideLength) || isValid(text) }
}
