/// The patterns `@WireField` states of text members, written as JSON Schema's regular
/// expressions (which Swift's `Regex` reads alike): the API document shows them and the services
/// check them with the same text. A whole-text pattern ends in `$(?!\n)`: Python's `$` (the API
/// tests' tools) also matches before a final newline, Swift's and ECMA 262's do not.
public enum TextPatterns {
    /// A person's text on one line: a visible character, no control characters (names, car models).
    public static let line = #"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$(?!\n)"#
    public static let lineMeaning = "text with a visible character and no control characters"
    /// A message: something besides spaces (lines are allowed).
    public static let message = #"[^\s\x1C-\x1F]"#
    public static let messageMeaning = "more than spaces"
    /// E.164: a `+`, then 8 to 15 digits, the first not 0.
    public static let phoneNumber = #"^\+[1-9][0-9]{7,14}$(?!\n)"#
    public static let phoneNumberMeaning = "in international form, a + and 8 to 15 digits (+380501234567)"
    /// A device id names a topic: printable ASCII without spaces, 1 to 128 of them.
    public static let deviceID = #"^[!-~]{1,128}$(?!\n)"#
    public static let deviceIDMeaning = "1 to 128 printable ASCII characters without spaces"
    /// A page's cursor (`next_before`): a time in milliseconds, `_`, an order id.
    public static let historyCursor = #"^[0-9]{1,15}_[!-~]{1,64}$(?!\n)"#
    public static let historyCursorMeaning = "the next_before of a previous page"
}
