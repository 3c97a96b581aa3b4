import Foundation
import Testing
import Wire

/// The derived one-pass codec of every wire type against Foundation's `Codable`, synthesized from
/// the same declaration: for thousands of values generated from the type's schema, and mutations
/// of them, a value the fast reader reads is the value JSONDecoder decodes, and the fast writer
/// writes the bytes JSONEncoder writes.
@Suite struct WirePropertyTests {
    static let valuesPerType = 600
    static let mutationsPerValue = 3

    @Test func theCatalogHasEveryTypeOfTheContract() {
        let names = Set(WireCatalog.cases.map(\.name))
        #expect(WireCatalog.cases.count > 60, "\(names.sorted())")
        for name in [
            "Order", "OrderStatusChanged", "IngestBatch", "TripEvent", "Trip", "Destination", "GeoPoint", "WebhookDelivery", "TripProgress",
        ] {
            #expect(names.contains(name), "\(name) is generated and checked")
        }
    }

    @Test(arguments: WireCatalog.cases)
    func fastPathAgreesWithFoundation(_ wireCase: WireCase) throws {
        var generator = WireGenerator(random: SystemRandomNumberGenerator())
        var counts = WireCase.Counts()
        for _ in 0..<Self.valuesPerType {
            generator.wild = Bool.random()
            let bytes = generator.value(wireCase.schema).jsonBytes
            for problem in wireCase.check(bytes, &counts, generator.wild ? .wild : .plain) {
                Issue.record("\(wireCase.name): \(problem)")
            }
            for _ in 0..<Self.mutationsPerValue {
                for problem in wireCase.check(generator.mutate(bytes), &counts, .mutated) {
                    Issue.record("\(wireCase.name): \(problem)")
                }
            }
        }
        // The comparison ran on real values, and the fast path read every plain one.
        #expect(counts.plain > Self.valuesPerType / 8, "\(wireCase.name): only \(counts.plain) plain values decode")
        #expect(
            counts.plainFastRead == counts.plain,
            "\(wireCase.name): the fast path read \(counts.plainFastRead) of \(counts.plain) plain values")
    }
}

/// One wire type, checked through closures so the catalog can hold every type.
struct WireCase: CustomTestStringConvertible, Sendable {
    enum Kind { case plain, wild, mutated }
    struct Counts {
        /// Plain values Foundation decodes, and how many of those the fast reader read.
        var plain = 0, plainFastRead = 0
    }

    let name: String
    let schema: WireSchema
    let check: @Sendable ([UInt8], inout Counts, Kind) -> [String]

    var testDescription: String { name }

    static func of<Value: WireValue>(_ type: Value.Type) -> WireCase {
        WireCase(name: String(describing: type), schema: Value.wireSchema) { bytes, counts, kind in
            let encoder = JSONCoding.encoder()
            let text = String(decoding: bytes, as: UTF8.self)
            let reference = try? JSONCoding.decoder().decode(Value.self, from: Data(bytes))
            let fast = Value.readWhole(bytes)
            var problems: [String] = []
            if let fast {
                if let reference {
                    if (try? encoder.encode(fast)) != (try? encoder.encode(reference)) {
                        problems.append("the fast reader and JSONDecoder differ on \(text)")
                    }
                } else {
                    problems.append("the fast reader reads what JSONDecoder refuses: \(text)")
                }
            }
            guard let reference, kind != .mutated else { return problems }
            if kind == .plain {
                counts.plain += 1
                if fast != nil { counts.plainFastRead += 1 } else { problems.append("the fast path did not read \(text)") }
            }
            let written = reference.jsonBytes
            let expected = (try? encoder.encode(reference)).map(Array.init) ?? []
            if written != expected {
                problems.append(
                    "written \(String(decoding: written, as: UTF8.self)), JSONEncoder \(String(decoding: expected, as: UTF8.self))")
            }
            return problems
        }
    }
}
