import Foundation
import Testing
import Wire

@testable import RideCtlKit

@Suite struct BenchTableTests {
    @Test func jsonHasEveryRowWithItsUnroundedNumber() throws {
        var table = BenchTable(title: "bench x")
        table.add("throughput", BenchTable.rate(12_345.6, "msg/s"), "≥ 10 000 msg/s", met: true)
        table.add("latency", BenchTable.micros(1_234), "reported")
        table.add("both", "\(BenchTable.micros(5)) / \(BenchTable.micros(9))", "reported")
        table.add("stuck", "\(2)", "0", met: false)
        let document = try JSONCoding.decode(JSONValue.self, from: Array(table.json().utf8))
        #expect(document["benchmark"] == "bench x" && document["all_met"] == false)
        let rows = try #require(document["rows"]?.arrayValue, "\(document)")
        #expect(rows.count == 4)
        #expect(rows[0]["result"] == "12.3 k msg/s" && rows[0]["value"] == 12_345.6 && rows[0]["unit"] == "msg/s" && rows[0]["met"] == true)
        #expect(rows[1]["result"] == "1.23 ms" && rows[1]["value"] == 1_234 && rows[1]["unit"] == "µs" && rows[1]["met"] == nil)
        #expect(rows[2]["result"] == "5 µs / 9 µs" && rows[2]["value"] == nil, "two figures are no one number")
        #expect(rows[3]["value"] == 2 && rows[3]["met"] == false)
        #expect(table.render().contains("✘ MISSED"))
    }
}
