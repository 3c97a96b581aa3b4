import Foundation

/// ANSI colours, only where a person is watching a terminal (and `NO_COLOR` is not set).
public enum ANSI {
    public static func isTerminal(fileDescriptor: Int32) -> Bool {
        isatty(fileDescriptor) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    public static func wrap(_ text: String, _ code: String) -> String { "\u{1B}[\(code)m\(text)\u{1B}[0m" }
    public static func dim(_ text: String) -> String { wrap(text, "2") }
    public static func bold(_ text: String) -> String { wrap(text, "1") }
    public static func red(_ text: String) -> String { wrap(text, "31") }
    public static func green(_ text: String) -> String { wrap(text, "32") }
    public static func yellow(_ text: String) -> String { wrap(text, "33") }
    public static func blue(_ text: String) -> String { wrap(text, "34") }
    public static func magenta(_ text: String) -> String { wrap(text, "35") }
    public static func cyan(_ text: String) -> String { wrap(text, "36") }

    /// A stable colour per name (service prefixes in `ridectl up`, topics in `ridectl tail`).
    public static func colorFor(_ name: String, _ text: String) -> String {
        let palette = ["36", "35", "32", "34", "33", "96", "95", "92"]
        let index = name.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0x7fff_ffff } % palette.count
        return wrap(text, palette[index])
    }
}
