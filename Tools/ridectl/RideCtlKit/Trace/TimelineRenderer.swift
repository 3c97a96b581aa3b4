import Foundation
import Wire

/// `ridectl trace`'s table: one line per step, its hops in columns (spans), or its source and
/// sequence (events); then the slowest hop.
public enum TimelineRenderer {
    public static func text(_ timeline: RideTimeline, origin source: String) -> String {
        let steps = timeline.steps
        let noun = (timeline.origin == .spans ? "step" : "event") + (steps.count == 1 ? "" : "s")
        var out = "order \(timeline.orderID): \(steps.count) \(noun) from \(source)"
        if timeline.origin == .spans { out += " (\(timeline.traces.count) trace\(timeline.traces.count == 1 ? "" : "s"))" }
        out += "\n"
        let labelWidth = max(16, steps.map { label($0).count }.max() ?? 0) + 2
        let serviceWidth = max(8, steps.map(\.service.count).max() ?? 0) + 2
        var header = pad("TIME (UTC)", 14) + pad("GAP", 10) + pad("STATUS / EVENT", labelWidth) + pad("PROCESS", serviceWidth)
        if timeline.origin == .spans {
            header += ["BUS", "QUEUE", "HANDLER", "COMMIT", "OUTBOX", "TOTAL"].map { left($0, 9) }.joined() + "  CAUSE"
        } else {
            header += "SOURCE#SEQUENCE"
        }
        out += header + "\n"
        for step in steps {
            var line =
                pad(clock(step.time), 14) + pad(step.sincePrevious.map { "+" + gap($0) } ?? "", 10) + pad(label(step), labelWidth)
                + pad(step.service, serviceWidth)
            if timeline.origin == .spans {
                let hops = step.hops
                line += [hops?.bus, hops?.brokerQueue, hops?.handler, hops?.databaseCommit, hops?.outbox, hops?.total].map {
                    left($0.map(milliseconds) ?? "-", 9)
                }.joined()
                line += "  " + (step.cause ?? "")
            } else {
                line += step.cause ?? ""
            }
            out += line.trimmingTrailingSpaces() + "\n"
        }
        if let slowest = timeline.slowestHop {
            out +=
                "\nslowest hop: \(slowest.hop) \(milliseconds(slowest.milliseconds)) at \(label(slowest.step)) in \(slowest.step.service)"
            if let cause = slowest.step.cause { out += " (\(cause))" }
            out += "\n"
        } else if timeline.origin == .events {
            out += "\n(no spans: times and gaps from the events; `ridectl up --traces` records each hop)\n"
        }
        return out
    }

    public static func json(_ timeline: RideTimeline) throws -> String {
        String(decoding: try JSONCoding.encoder(pretty: true).encode(timeline), as: UTF8.self) + "\n"
    }

    static func label(_ step: TimelineStep) -> String { step.count > 1 ? "\(step.label) ×\(step.count)" : step.label }

    /// `10:02:41.950`
    static func clock(_ date: Date) -> String {
        let text = RFC3339.format(date)
        guard let t = text.firstIndex(of: "T") else { return text }
        return String(text[text.index(after: t)...].prefix(12))
    }

    /// `0.42ms`, `12.3ms`, `1.234s`
    static func milliseconds(_ value: Double) -> String {
        if abs(value) >= 1000 { return String(format: "%.3fs", value / 1000) }
        if abs(value) >= 10 { return String(format: "%.1fms", value) }
        return String(format: "%.2fms", value)
    }

    /// `53ms`, `1.20s`, `2m05s`
    static func gap(_ seconds: Double) -> String {
        if seconds < 1 { return String(format: "%.0fms", seconds * 1000) }
        if seconds < 60 { return String(format: "%.2fs", seconds) }
        let whole = Int(seconds)
        return String(format: "%dm%02ds", whole / 60, whole % 60)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text.padding(toLength: width, withPad: " ", startingAt: 0)
    }
    static func left(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
