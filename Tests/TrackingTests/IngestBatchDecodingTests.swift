import Bus
import Foundation
import Testing

@testable import RideModels

/// The fast batch decoder against JSONDecoder: whenever the fast path answers, it answers what
/// JSONDecoder would; whenever it cannot, JSONDecoder decides (errors included).
@Suite struct IngestBatchDecodingTests {
    struct Failed: Error, Equatable { let reason: String }

    func reference(_ bytes: [UInt8]) -> Result<IngestBatch, Failed> {
        Result { try JSONCoding.decode(IngestBatch.self, from: bytes) }.mapError { Failed(reason: "\($0)") }
    }

    func fast(_ bytes: [UInt8]) -> IngestBatch? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONFastReader(bytes: buffer)
            return reader.readIngestBatch()
        }
    }

    /// The decoder's answer equals JSONDecoder's, success or failure.
    func agree(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = reference(bytes)
        let actual = Result { try IngestBatch.decode(from: bytes) }.mapError { Failed(reason: "\($0)") }
        switch (expected, actual) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        case (.failure, .failure):
            break
        default:
            Issue.record("disagreement on \(String(decoding: bytes, as: UTF8.self)): \(expected) vs \(actual)", sourceLocation: sourceLocation)
        }
        if let quick = fast(bytes) {
            #expect(expected == .success(quick), "the fast path answered differently", sourceLocation: sourceLocation)
        }
    }

    @Test func theSDKsShapeTakesTheFastPath() throws {
        let batch = IngestBatch(publishableKey: "pk", batchID: 42, locations: [
            DeviceLocation(latitude: 47.835903, longitude: 35.11459362, recordedAt: RFC3339.parse("2026-11-21T09:30:00.123Z")!,
                           accuracy: 5, speed: 12.5, bearing: 90, altitude: -3.25, mocked: true),
            DeviceLocation(latitude: -0.5, longitude: 0, recordedAt: RFC3339.parse("2026-11-21T09:30:01Z")!),
        ])
        let bytes = try JSONCoding.encode(batch)
        #expect(fast(bytes) == batch)
        agree(bytes)
        let spaced = Array(#" { "batch_id" : 7 , "locations" : [ { "longitude" : 1.5 , "latitude" : -2 , "recorded_at" : "2026-11-21T09:30:00Z" , "speed" : null } ] , "publishable_key" : "k" , "device_id" : "d" } "#.utf8)
        #expect(fast(spaced)?.deviceID == "d")
        agree(spaced)
    }

    @Test func randomBatchesDecodeAlike() throws {
        var generator = SystemRandomNumberGenerator()
        func randomNumber() -> Double {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: Double(Int.random(in: -1000...1000, using: &generator))
            case 1: (Double.random(in: -180...180, using: &generator) * 1e6).rounded() / 1e6
            case 2: Double.random(in: -1e-6...1e-6, using: &generator)
            case 3: Double.random(in: -1e12...1e12, using: &generator)
            case 4: Double.random(in: -90...90, using: &generator)
            default: 0.1 + 0.2
            }
        }
        for _ in 0..<500 {
            let locations = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                DeviceLocation(latitude: randomNumber(), longitude: randomNumber(),
                               recordedAt: Date(timeIntervalSince1970: Double(Int.random(in: 1_700_000_000_000...1_800_000_000_000, using: &generator)) / 1000),
                               accuracy: Bool.random() ? randomNumber() : nil, speed: Bool.random() ? randomNumber() : nil,
                               bearing: Bool.random() ? randomNumber() : nil, altitude: Bool.random() ? randomNumber() : nil,
                               mocked: Bool.random() ? Bool.random() : nil)
            }
            let batch = IngestBatch(publishableKey: Bool.random() ? "pk_dev" : "ключ \"quoted\"", deviceID: Bool.random() ? "car-\(Int.random(in: 0...9))" : nil,
                                    batchID: UInt64.random(in: 0...UInt64.max, using: &generator),
                                    device: Int.random(in: 0..<5) == 0 ? DeviceIntents(tracking: true) : nil, locations: locations)
            agree(try JSONCoding.encode(batch))
        }
    }

    @Test func numberFormsTheFastPathDoesNotTakeStillAgree() {
        for number in ["1e5", "1E-7", "-0", "0", "05", "1.", ".5", "-", "1.0000000000000002", "123456789012345678", "0.1234567890123456789", "+1", "1.5e+3"] {
            agree(Array(#"{"publishable_key":"k","batch_id":1,"locations":[{"latitude":\#(number),"longitude":1,"recorded_at":"2026-11-21T09:30:00Z"}]}"#.utf8))
        }
        for batchID in ["1.0", "-1", "01", "18446744073709551616", "1e2", "\"1\""] {
            agree(Array(#"{"publishable_key":"k","batch_id":\#(batchID),"locations":[]}"#.utf8))
        }
    }

    @Test func everyTruncationAndMutilationAgrees() throws {
        let valid = Array(#"{"publishable_key":"pk","batch_id":3,"locations":[{"latitude":47.8,"longitude":35.1,"recorded_at":"2026-11-21T09:30:00Z","accuracy":5,"mocked":false}]}"#.utf8)
        for end in 0..<valid.count { agree(Array(valid[..<end])) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var mutated = valid
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            agree(mutated)
        }
        // Repeated and unknown keys, geotags and intents: JSONDecoder's call.
        agree(Array(#"{"publishable_key":"a","publishable_key":"b","batch_id":1,"locations":[]}"#.utf8))
        agree(Array(#"{"publishable_key":"a","batch_id":1,"locations":[],"extra":1}"#.utf8))
        agree(Array(#"{"publishable_key":"a","batch_id":1,"locations":[{"latitude":1,"latitude":2,"longitude":1,"recorded_at":"2026-11-21T09:30:00Z"}]}"#.utf8))
        agree(Array(#"{"publishable_key":"a","batch_id":1,"locations":[],"geotags":[]}"#.utf8))
        agree(Array(#"{"publishable_key":"a","batch_id":1,"locations":[{"latitude":1,"longitude":1,"recorded_at":"yesterday"}]}"#.utf8))
        agree(Array("[]".utf8))
        agree([])
    }
}

/// The hand-written Nearby reply and ingest ack against JSONEncoder: the same bytes.
@Suite struct HandWrittenJSONTests {
    @Test func sameBytesAsTheEncoder() throws {
        let seen = RFC3339.parse("2026-11-21T09:30:00.123Z")!
        let devices = [
            NearbyDevice(deviceID: "driver-1", name: "Ann \"A\" Smith", distance: 12.3, location: GeoJSONPoint(latitude: 47.8359, longitude: 35.1146),
                         available: true, tracking: true, lastSeen: seen, metadata: ["car": ["model": "Prius", "seats": 4], "rating": 4.9]),
            NearbyDevice(deviceID: "d/2", name: nil, distance: 0, location: GeoJSONPoint(latitude: -89.999999, longitude: 180),
                         available: false, tracking: false, lastSeen: nil, metadata: [:]),
        ]
        for result in [NearbyResult(devices: devices), NearbyResult(devices: [])] {
            let expected = try JSONCoding.encoder().encode(result)
            #expect(String(decoding: result.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
            #expect(try JSONCoding.decode(NearbyResult.self, from: result.jsonBytes) == result)
        }
    }

    @Test(arguments: [
        DeviceIntents(),
        DeviceIntents(name: "Ann", metadata: ["car": ["plate": "AX 1\n"]], tracking: true, available: false, changedAt: RFC3339.parse("2026-11-21T09:30:00Z")),
        DeviceIntents(metadata: [:], available: true),
    ])
    func acksAreWhatTheEncoderWouldWrite(device: DeviceIntents) throws {
        for rejected in [[], [RejectedItem(kind: "location", index: 3, field: "locations[3].latitude", reason: "must be within ±90, got 91")]] {
            let ack = IngestAck(batchID: 18_446_744_073_709_551_615, accepted: 7, rejected: rejected, device: device)
            let expected = try JSONCoding.encoder().encode(ack)
            #expect(String(decoding: ack.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }
}
