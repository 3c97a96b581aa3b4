import Foundation
import TestProcess
import Testing

@testable import UsersService

/// Photos are stored whole or not at all: walked to their end, rebuilt without metadata.
@Suite struct ImageCleanerTests {
    static let png = ImageSnifferTests.png
    /// Real 32×24 JPEGs (Pillow, quality 60): baseline, and progressive.
    static let jpeg = [UInt8](Data(base64Encoded: PhotoFixtures.baselineJPEG)!)
    static let progressive = [UInt8](Data(base64Encoded: PhotoFixtures.progressiveJPEG)!)
    static let html = Array(("<html><script>alert(document.cookie)</script>" + String(repeating: "<p>x</p>", count: 1000) + "</html>").utf8)

    func cleaned(_ bytes: [UInt8], _ type: String) -> [UInt8]? { try? ImageCleaner.clean(bytes, contentType: type).get() }

    func refusal(_ bytes: [UInt8], _ type: String) -> String? {
        guard case .failure(let refusal) = ImageCleaner.clean(bytes, contentType: type) else { return nil }
        #expect(refusal.code == "invalid_image")
        return refusal.message
    }

    /// A PNG chunk with its CRC.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let length = UInt32(data.count)
        let crc = CRC32.checksum(body[...])
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + body
            + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }

    @Test func realImagesAreStoredAsTheyCame() {
        #expect(cleaned(Self.png, "image/png") == Self.png)
        #expect(cleaned(Self.jpeg, "image/jpeg") == Self.jpeg)
        #expect(cleaned(Self.progressive, "image/jpeg") == Self.progressive)
        #expect(CRC32.checksum(Array("123456789".utf8)[...]) == 0xCBF4_3926, "the check value of CRC-32")
    }

    @Test func metadataIsLeftOut() {
        // A text chunk after IHDR (33 bytes in): gone, the rest as it was.
        let withText = Array(Self.png[..<33]) + Self.chunk("tEXt", Array("Comment\u{0}<script>x</script>".utf8)) + Array(Self.png[33...])
        #expect(cleaned(withText, "image/png") == Self.png)
        // EXIF with a GPS position (APP1) and a comment (COM) after SOI: gone.
        let exif: [UInt8] = [0xFF, 0xE1, 0x00, 0x12] + Array("Exif\u{0}\u{0}GPS:50.4".utf8) + [0, 0]
        let comment: [UInt8] = [0xFF, 0xFE, 0x00, 0x07] + Array("hello".utf8)
        #expect(cleaned(Array(Self.jpeg[..<2]) + exif + comment + Array(Self.jpeg[2...]), "image/jpeg") == Self.jpeg)
    }

    @Test func whatRidesBehindAValidImageIsRefused() {
        #expect(refusal(Self.png + Self.html, "image/png")?.contains("follow its end") == true)
        #expect(refusal(Array(Self.png[..<33]) + Self.html, "image/png") != nil, "a PNG header, then a page (issue 38)")
        #expect(refusal(Self.jpeg + Self.html, "image/jpeg")?.contains("follow its end") == true)
        #expect(refusal(Array(Self.jpeg.prefix(200)) + Self.html, "image/jpeg") != nil)
        #expect(refusal(Array(Self.png.dropLast(12)), "image/png")?.contains("cut short") == true)
        #expect(refusal(Array(Self.jpeg.dropLast(2)), "image/jpeg")?.contains("cut short") == true)
        var flipped = Self.png
        flipped[45] ^= 0x01  // inside IDAT
        #expect(refusal(flipped, "image/png")?.contains("CRC") == true)
        #expect(
            refusal(ImageSnifferTests.jpeg(width: 10, height: 10), "image/jpeg")?.contains("before any scan") == true,
            "a header and nothing else")
        let unknownCritical = Array(Self.png[..<33]) + Self.chunk("ABCD", [1, 2, 3]) + Array(Self.png[33...])
        #expect(refusal(unknownCritical, "image/png")?.contains("critical") == true)
    }
}
