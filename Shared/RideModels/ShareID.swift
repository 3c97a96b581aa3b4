/// Share ids (a trip's, a ride's): 7 characters of an alphabet without look-alikes (no 0/O, 1/l/I), so a share URL
/// read aloud or typed from a screen works. 55^7 ≈ 1.5 × 10^12 ids.
public enum ShareID {
    static let alphabet = Array("23456789abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ")

    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<7).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    public static func isValid(_ text: String) -> Bool {
        text.count == 7 && text.allSatisfy { alphabet.contains($0) }
    }
}
