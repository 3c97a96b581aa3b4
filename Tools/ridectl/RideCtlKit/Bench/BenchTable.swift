import ArgumentParser
import Foundation
import Wire

/// The benchmark's printed table (or, with `--json`, the same rows as one JSON object).
struct BenchTable {
    struct Row {
        var measure: String
        var result: BenchResult
        var target: String
        var met: Bool?
    }

    let title: String
    private var rows: [Row] = []

    init(title: String) { self.title = title }

    /// `ridectl bench <bench> — <cores> cores, <setup>`: what ran, on what.
    init(bench: String, _ setup: String) {
        self.init(title: "ridectl bench \(bench) — \(ProcessInfo.processInfo.activeProcessorCount) cores, \(setup)")
    }

    mutating func add(_ measure: String, _ result: BenchResult, _ target: String, met: Bool? = nil) {
        rows.append(Row(measure: measure, result: result, target: target, met: met))
    }

    /// A result formatted elsewhere: its number and unit are read back from the text when it is one
    /// measurement (`12 ms`), else it has none.
    mutating func add(_ measure: String, _ result: String, _ target: String, met: Bool? = nil) {
        add(measure, BenchResult(parsing: result), target, met: met)
    }

    var allMet: Bool { rows.allSatisfy { $0.met != false } }

    /// Prints the table (or its JSON, `--json`); exits 1 when a target was missed.
    func print(json: Bool) throws {
        Output.out(json ? self.json() + "\n" : render())
        if !allMet { throw ExitCode(1) }
    }

    /// `{"benchmark":"…","all_met":true,"rows":[{"measure":"…","result":"12.3 k msg/s","value":12345.6,"unit":"msg/s","target":"…","met":true},…]}`:
    /// each row as printed, plus its number (unrounded) and unit when the result is one measurement.
    func json() -> String {
        let rows: [JSONValue] = rows.map { row in
            var object: [String: JSONValue] = [
                "measure": .string(row.measure), "result": .string(row.result.text), "target": .string(row.target),
            ]
            if let met = row.met { object["met"] = .bool(met) }
            if let value = row.result.value, value.isFinite {
                (object["value"], object["unit"]) = (.number(value), .string(row.result.unit))
            }
            return .object(object)
        }
        let document: JSONValue = .object(["benchmark": .string(title), "all_met": .bool(allMet), "rows": .array(rows)])
        return String(decoding: (try? JSONCoding.encoder(pretty: false).encode(document)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func render() -> String {
        let w0 = max(7, rows.map(\.measure.count).max() ?? 0)
        let w1 = max(6, rows.map(\.result.text.count).max() ?? 0)
        var text = "\n\(title)\n\n"
        text +=
            "measure".padding(toLength: w0, withPad: " ", startingAt: 0) + "  "
            + "result".padding(toLength: w1, withPad: " ", startingAt: 0) + "  target\n"
        text +=
            String(repeating: "-", count: w0) + "  " + String(repeating: "-", count: w1) + "  " + String(repeating: "-", count: 30) + "\n"
        for row in rows {
            let mark = row.met.map { $0 ? "  ✔" : "  ✘ MISSED" } ?? ""
            text +=
                row.measure.padding(toLength: w0, withPad: " ", startingAt: 0) + "  "
                + row.result.text.padding(toLength: w1, withPad: " ", startingAt: 0) + "  "
                + row.target + mark + "\n"
        }
        return text + "\n"
    }

    static func rate(_ value: Double, _ unit: String) -> BenchResult {
        let text =
            if value >= 1_000_000 { String(format: "%.2f M %@", value / 1_000_000, unit) } else if value >= 1000 {
                String(format: "%.1f k %@", value / 1000, unit)
            } else { String(format: "%.0f %@", value, unit) }
        return BenchResult(text: text, value: value, unit: unit)
    }

    static func micros(_ value: Double) -> BenchResult {
        BenchResult(
            text: value >= 1000 ? String(format: "%.2f ms", value / 1000) : String(format: "%.0f µs", value), value: value, unit: "µs")
    }
}

/// One result: the text the table prints, and the number behind it when it is one measurement.
/// String literals and interpolations (`"\(a) / \(b)"`) are results without a number.
struct BenchResult: ExpressibleByStringInterpolation, CustomStringConvertible {
    var text: String
    var value: Double?
    var unit: String

    init(text: String, value: Double?, unit: String) {
        (self.text, self.value, self.unit) = (text, value, unit)
    }

    init(stringLiteral text: String) { self.init(text: text, value: nil, unit: "") }

    init(stringInterpolation: DefaultStringInterpolation) { self.init(stringLiteral: String(stringInterpolation: stringInterpolation)) }

    /// `250 µs` → 250 µs, `3 of 20` → no number.
    init(parsing text: String) {
        let parts = text.split(separator: " ")
        if parts.count <= 2, let first = parts.first, let number = Double(first), number.isFinite {
            self.init(text: text, value: number, unit: parts.count == 2 ? String(parts[1]) : "")
        } else {
            self.init(stringLiteral: text)
        }
    }

    var description: String { text }
}

/// `--json`: the results as one JSON object on standard output instead of the table.
struct BenchFormat: ParsableArguments {
    @Flag(
        help:
            "Print the results as one JSON object (each row's measure, result, number, unit, target and whether it was met) instead of the table."
    )
    var json = false
}
