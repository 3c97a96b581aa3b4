import Bus
import Foundation
import ServiceKit
import SettingsKit
import Wire

/// One readable line per event for `ridectl tail`:
/// `09:30:00.123 order.status.ACCEPTED orders#42 order=8f2c… status=ACCEPTED rider=41c0… driver=9d2e… v=2`
/// — the event type's headline fields (`EventHeadlines`), or the fields asked for (`--fields`), or
/// for a type without a headline its whole data flattened.
public struct EventLineFormatter: Sendable {
    public var colored: Bool
    /// Lines are cut to this many characters (the terminal's width).
    public var width: Int
    /// The fields to show of every event, whatever its type (nil: each type's headline).
    public var fields: [EventHeadlines.Field]?

    public init(colored: Bool, width: Int, fields: [EventHeadlines.Field]? = nil) {
        self.colored = colored
        self.width = width
        self.fields = fields
    }

    public func line(topic: String, event: CloudEvent<JSONValue>) -> String {
        let time = String(RFC3339.format(event.time).dropFirst(11).dropLast())
        let origin = "\(event.source)#\(event.sequence)"
        let summary =
            if let chosen = fields ?? EventHeadlines.fields[event.type] { EventHeadlines.line(chosen, of: event.data) } else {
                Self.summary(event.data)
            }
        let plainLength = time.count + topic.count + origin.count + summary.count + 3
        var shownSummary = summary
        if plainLength > width {
            let room = max(0, summary.count - (plainLength - width) - 1)
            shownSummary = String(summary.prefix(room)) + "…"
        }
        guard colored else { return "\(time) \(topic) \(origin) \(shownSummary)" }
        return
            "\(ANSI.dim(time)) \(ANSI.colorFor(topic.split(separator: ".").prefix(2).joined(separator: "."), topic)) \(ANSI.dim(origin)) \(shownSummary)"
    }

    /// `key=value` pairs of the data, nested objects flattened two levels deep (`order.status=NEW`),
    /// a GeoJSON point as its coordinates (`location=[35.1146,47.8359]`), arrays shown by size
    /// unless short and numeric, long strings shortened.
    public static func summary(_ data: JSONValue) -> String {
        var parts: [String] = []
        flatten(data, prefix: "", depth: 0, into: &parts)
        return parts.joined(separator: " ")
    }

    private static func flatten(_ value: JSONValue, prefix: String, depth: Int, into parts: inout [String]) {
        switch value {
        case .object(let members) where members.count == 2 && members["type"] == .string("Point"):
            let text = scalar(members["coordinates"] ?? .null)
            parts.append(prefix.isEmpty ? text : "\(prefix)=\(text)")
        case .object(let members):
            if members.isEmpty {
                parts.append(prefix.isEmpty ? "{}" : "\(prefix)={}")
                return
            }
            guard depth < 2 else {
                parts.append("\(prefix)={…}")
                return
            }
            for key in orderedKeys(members) {
                flatten(members[key]!, prefix: prefix.isEmpty ? key : "\(prefix).\(key)", depth: depth + 1, into: &parts)
            }
        default:
            let text = scalar(value)
            parts.append(prefix.isEmpty ? text : "\(prefix)=\(text)")
        }
    }

    /// Identity and state first (`id`, `*_id`, `status`, `type`), then the rest alphabetically.
    private static func orderedKeys(_ members: [String: JSONValue]) -> [String] {
        func rank(_ key: String) -> Int {
            if key == "id" { return 0 }
            if key.hasSuffix("_id") { return 1 }
            if key == "status" || key == "value" || key == "type" { return 2 }
            return 3
        }
        return members.keys.sorted { (rank($0), $0) < (rank($1), $1) }
    }

    static func scalar(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return number(n)
        case .string(let s):
            let short = s.count > 40 ? String(s.prefix(39)) + "…" : s
            return short.contains(" ") || short.isEmpty ? "\"\(short)\"" : short
        case .array(let items):
            if items.count <= 4, items.allSatisfy({ $0.numberValue != nil }) {
                return "[" + items.map { number($0.numberValue!) }.joined(separator: ",") + "]"
            }
            return "[\(items.count) item\(items.count == 1 ? "" : "s")]"
        case .object: return "{…}"
        }
    }

    static func number(_ n: Double) -> String {
        if n.rounded() == n, abs(n) < 1e15 { return String(Int64(n)) }
        var text = String(format: "%.6f", n)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
