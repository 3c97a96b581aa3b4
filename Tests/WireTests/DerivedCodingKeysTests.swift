import Foundation
import Testing
import Wire

/// `@WireModel` derives `CodingKeys` for a struct that declares none: each stored property's name
/// in snake_case, the same for Foundation's `Codable`, the one-pass codec and the schema.
@Suite struct DerivedCodingKeysTests {
    @WireModel
    struct Sample: Codable, Equatable {
        var userID: String
        var deviceIDs: [String]
        var homepageURLString: String?
        var etaSeconds: Int
        var http2Port: Int
        var plain: Bool
        /// A `let` with a value is not coded (as synthesized `Codable` does).
        let version = 1
        /// A unit in the key, not the name.
        @WireKey("distance_m") var distanceMetres: Int
    }

    /// `@WireKeys`: the same keys for a `Codable` type that is no wire model.
    @WireKeys
    struct Plain: Codable, Equatable {
        var orderID: String
        @WireKey("since_previous_s") var sincePrevious: Double
        var when: Date
    }

    static let sample = Sample(
        userID: "u1", deviceIDs: ["d1"], homepageURLString: "https://x", etaSeconds: 60, http2Port: 8443, plain: true, distanceMetres: 1200)

    @Test func eachNameIsItsKeyInSnakeCase() throws {
        let text = try JSONCoding.encodeText(Self.sample)
        #expect(
            text
                == #"{"device_ids":["d1"],"distance_m":1200,"eta_seconds":60,"homepage_url_string":"https://x","http2_port":8443,"plain":true,"user_id":"u1"}"#
        )
        #expect(try JSONCoding.decode(Sample.self, from: Array(text.utf8)) == Self.sample)
    }

    @Test func theOnePassCodecAndTheSchemaUseTheSameKeys() throws {
        var fast: [UInt8] = []
        Self.sample.writeJSON(to: &fast)
        #expect(fast == Array(try JSONCoding.encodeText(Self.sample).utf8))
        #expect(Sample.readWhole(fast) == Self.sample)
        guard case .model(let model) = Sample.wireSchema else {
            Issue.record("not a model schema")
            return
        }
        #expect(
            model.properties.map(\.key) == [
                "device_ids", "distance_m", "eta_seconds", "homepage_url_string", "http2_port", "plain", "user_id",
            ])
    }

    @Test func aPlainCodableTypeGetsTheSameKeys() throws {
        let plain = Plain(orderID: "o-1", sincePrevious: 1.5, when: Date(timeIntervalSince1970: 0))
        let text = try JSONCoding.encodeText(plain)
        #expect(text.contains(#""order_id":"o-1""#) && text.contains(#""since_previous_s":1.5"#) && text.contains(#""when":"#))
        #expect(try JSONCoding.decode(Plain.self, from: Array(text.utf8)) == plain)
    }
}
