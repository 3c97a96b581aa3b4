import Foundation
import RideContract
import RideModels
import Testing
import Wire

@testable import Bus
@testable import ProtocolFuzzing

/// The checked-in seed corpus (Fuzz/corpus), replayed without libFuzzer: every seed keeps every
/// property, and each op has a seed its params decode, so fuzzing starts from inputs that go deep.
@Suite struct SeedCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
        "corpus")

    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted().map { name in
            (name, Array(try Data(contentsOf: corpus.appendingPathComponent(name))))
        }
    }

    @Test func everySeedKeepsEveryProperty() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count > OpParams.all.count)
        for seed in seeds {
            #expect(ProtocolFuzz.violations(of: seed.bytes).isEmpty, "\(seed.name): \(ProtocolFuzz.violations(of: seed.bytes))")
        }
    }

    /// `Fuzz/corpus/<service>.<op>`: the op's name, a newline, params its type decodes.
    @Test func everyOpHasASeedThatDecodes() throws {
        let seeds = Dictionary(try Self.seeds().map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        for op in OpParams.all {
            guard let bytes = seeds[op.name] else {
                Issue.record("no seed Fuzz/corpus/\(op.name)")
                continue
            }
            let json = Array(bytes.drop { $0 != UInt8(ascii: "\n") }.dropFirst())
            #expect(throws: Never.self, "\(op.name)'s seed does not decode") { try op.decode(json) }
        }
    }

    /// Each event seed is valid, and each payload type the fuzzer decodes has one of its own.
    @Test func everyEventSeedIsAValidEvent() throws {
        let events = Dictionary(
            try Self.seeds().filter { $0.name.hasPrefix("event-") }.map { ($0.name, Array($0.bytes.dropFirst("event\n".utf8.count))) },
            uniquingKeysWith: { first, _ in first })
        #expect(events.count >= 4)
        for (name, json) in events {
            #expect(throws: Never.self, "\(name)") { try CloudEvent<JSONValue>.decode(json) }
        }
        #expect(throws: Never.self) { try CloudEvent<OrderStatusChanged>.decode(events["event-order-status"] ?? []) }
        #expect(throws: Never.self) { try CloudEvent<DeviceLocationEvent>.decode(events["event-device-location"] ?? []) }
        #expect(throws: Never.self) { try CloudEvent<DeviceCommandEvent>.decode(events["event-device-command"] ?? []) }
        #expect(throws: Never.self) { try CloudEvent<TripEvent>.decode(events["event-trip-arrival"] ?? []) }
        let lifecycle = try? CloudEvent<LifecycleEvent>.decode(events["event-trip-arrival"] ?? [])
        guard case .arrival? = lifecycle?.data else {
            Issue.record("event-trip-arrival is not a LifecycleEvent arrival")
            return
        }
    }
}

/// The properties can fail: each check reports what breaks it (the libFuzzer target traps on
/// any report, so these are the crashes it would find).
@Suite struct PropertiesCanFailTests {
    @Test func aParamsDecoderAnswering5xxOrRefusingSilentlyIsReported() {
        var findings = Findings()
        let internalError = OpParams(service: "fake", op: "internal", typeName: "Fake") { _ throws(ServiceError) in
            throw ServiceError(status: 500, code: "internal", message: "boom")
        }
        ParamsProperties.check(internalError, Array("{}".utf8), &findings)
        let silent = OpParams(service: "fake", op: "silent", typeName: "Fake") { _ throws(ServiceError) in
            throw ServiceError(status: 422, code: "", message: "")
        }
        ParamsProperties.check(silent, Array("{}".utf8), &findings)
        #expect(findings.violations.count == 2, "\(findings.violations)")
    }

    @Test func aMalformedMessageFromTheBrokerIsReported() {
        var findings = Findings()
        MDPProperties.checkSent(BrokerOutgoing(to: [1], frames: [[], Array("MDPC01".utf8)]), &findings)
        #expect(findings.violations.count == 1)
    }

    @Test func anUnknownTargetIsNoInput() {
        #expect(ProtocolFuzz.violations(of: Array("nothing.here\n{}".utf8)).isEmpty)
        #expect(ProtocolFuzz.violations(of: []).isEmpty)
    }
}
