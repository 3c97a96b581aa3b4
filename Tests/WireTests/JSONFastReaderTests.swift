import Foundation
import Testing
import Wire

/// The fast reader against JSONDecoder: the same `Double` where it reads one, and
/// nil (JSONDecoder decides) for what JSON's grammar refuses or `Double` cannot hold.
@Suite struct JSONFastReaderTests {
    func fast(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONFastReader(bytes: buffer)
            guard let value = reader.number(), reader.atEnd() else { return nil }
            return value
        }
    }

    @Test(arguments: ["0", "-0.5", "12.25", "-7.870843572277408e-05", "1e5", "1E+5", "2.5e-7", "-1.5E300", "60.1699", "24.93545812345678"])
    func readsWhatJSONDecoderReads(_ text: String) throws {
        let reference = try JSONDecoder().decode(Double.self, from: Data(text.utf8))
        #expect(fast(text) == reference, "\(text)")
    }

    @Test(arguments: ["1e", "1e+", "1.e5", "-e5", "1e5.5", "1ee5", "1e400", "01e5", "-20.4978416341e-9765", "-4.5e-0713", "1e-400", "0e5"])
    func leavesTheRestToJSONDecoder(_ text: String) {
        #expect(fast(text) == nil, "\(text)")
    }

    /// Strings: ASCII and other UTF-8 read as they are; bytes that are not UTF-8 are left to
    /// JSONDecoder (which refuses them), as are escapes.
    @Test func readsStringsOfValidUTF8Only() {
        func fast(_ bytes: [UInt8]) -> String? {
            bytes.withUnsafeBufferPointer { buffer in
                var reader = JSONFastReader(bytes: buffer)
                return reader.string()
            }
        }
        func quoted(_ text: String) -> [UInt8] { Array("\"\(text)\"".utf8) }
        #expect(fast(quoted("d3f1c2a4-5b6e")) == "d3f1c2a4-5b6e")
        #expect(fast(quoted("")) == "")
        #expect(fast(quoted("Kallio, Helsinki — é 🚕")) == "Kallio, Helsinki — é 🚕")
        #expect(fast([0x22, 0x61, 0xFF, 0x62, 0x22]) == nil, "0xFF is never UTF-8")
        #expect(fast([0x22, 0xC3, 0x22]) == nil, "a sequence cut short")
        #expect(fast([0x22, 0xED, 0xA0, 0x80, 0x22]) == nil, "a surrogate's encoding")
        #expect(fast(quoted("a\\nb")) == nil, "an escape")
    }
}
