import Bus
import Foundation
import RideModels
import Testing

@testable import UsersService

/// Photos are judged by their bytes: the format's signature and a header that parses to sane dimensions.
@Suite struct ImageSnifferTests {
    /// A real 4×3 RGB PNG (zlib-compressed pixels, CRCs and all).
    static let png = [UInt8](
        Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAEElEQVR4nGP4z8AARww4OQD1MQv1NXv7ggAAAABJRU5ErkJggg==")!)

    /// A JPEG's header: SOI, a JFIF APP0 segment, then a start of frame (`marker`) of `width`×`height`.
    static func jpeg(width: Int, height: Int, marker: UInt8 = 0xC0) -> [UInt8] {
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
        let frame: [UInt8] = [
            0xFF, marker, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
            0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01,
        ]
        return [0xFF, 0xD8] + app0 + frame + [0xFF, 0xD9]
    }

    @Test func aPNGAndJPEGsAreRecognisedWithTheirDimensions() {
        #expect(ImageSniffer.sniff(Self.png) == .success(.init(contentType: "image/png", width: 4, height: 3)))
        #expect(
            ImageSniffer.sniff(Self.jpeg(width: 640, height: 480)) == .success(.init(contentType: "image/jpeg", width: 640, height: 480)))
        // Progressive (SOF2), after fill bytes before a marker.
        var progressive = Self.jpeg(width: 1200, height: 900, marker: 0xC2)
        progressive.insert(0xFF, at: 20)
        #expect(ImageSniffer.sniff(progressive) == .success(.init(contentType: "image/jpeg", width: 1200, height: 900)))
    }

    @Test func whatIsNotAJPEGOrPNGIsRefusedWhateverItIsCalled() {
        for bytes in [
            [UInt8](), Array("GIF89a\u{01}\u{00}\u{01}\u{00}".utf8), Array("just text, saved as photo.png".utf8), [0x42, 0x4D, 0x00, 0x00],
        ] {
            guard case .failure(let refusal) = ImageSniffer.sniff(bytes) else {
                Issue.record("taken: \(bytes.prefix(8))")
                continue
            }
            #expect(refusal.code == "unsupported_image")
        }
    }

    @Test func aSignatureWithABrokenOrInsaneHeaderIsRefused() {
        var noIHDR = Self.png
        noIHDR[12] = UInt8(ascii: "X")
        var zeroWide = Self.png
        zeroWide.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        var huge = Self.png
        huge.replaceSubrange(16..<20, with: [0x7F, 0xFF, 0xFF, 0xFF])
        let scanFirst: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0xFF, 0xD9]
        let cut = Array(Self.jpeg(width: 10, height: 10).prefix(24))
        let badLength: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0x00, 0x00]
        for (name, bytes) in [
            ("png cut", Array(Self.png.prefix(20))), ("no IHDR", noIHDR), ("0 wide", zeroWide), ("huge", huge),
            ("scan before frame", scanFirst), ("jpeg cut", cut),
            ("bad length", badLength),
        ] {
            guard case .failure(let refusal) = ImageSniffer.sniff(bytes) else {
                Issue.record("\(name) taken")
                continue
            }
            #expect(refusal.code == "invalid_image", "\(name)")
        }
    }

    @Test func anUploadIsCheckedHashedAndSizedBeforeItIsStored() throws {
        let photo = try PhotoOps.checked(PhotoUpload(userID: "u", kind: .profile, data: Data(Self.png).base64EncodedString()))
        #expect(photo.contentType == "image/png" && photo.width == 4 && photo.height == 3 && photo.bytes == Data(Self.png))
        #expect(photo.sha256.count == 64 && photo.sha256.allSatisfy(\.isHexDigit) && photo.sha256 == photo.sha256.lowercased())
        #expect(throws: ServiceError.unprocessable("invalid_params", "data: not base64")) {
            try PhotoOps.checked(PhotoUpload(userID: "u", kind: .profile, data: "not base64!"))
        }
        let oversized = Self.png + [UInt8](repeating: 0, count: PhotoRules.maxBytes)
        #expect(
            throws: ServiceError(
                status: 413, code: "too_large", message: "the image is \(oversized.count) bytes; at most \(PhotoRules.maxBytes)")
        ) {
            try PhotoOps.checked(PhotoUpload(userID: "u", kind: .profile, data: Data(oversized).base64EncodedString()))
        }
        do {
            _ = try PhotoOps.checked(PhotoUpload(userID: "u", kind: .car, data: Data("<svg/>".utf8).base64EncodedString()))
            Issue.record("an SVG taken")
        } catch let error as ServiceError {
            #expect(error.status == 415 && error.code == "unsupported_image")
        }
    }
}
