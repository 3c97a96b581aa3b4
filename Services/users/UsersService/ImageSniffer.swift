import Foundation

/// What an upload is, from its bytes alone — never from a file name or a `Content-Type`: a JPEG
/// (SOI marker, then segments up to a start-of-frame that gives the dimensions) or a PNG (the
/// signature, then an IHDR chunk). Anything else, or a header that does not parse, is refused.
enum ImageSniffer {
    struct Image: Equatable {
        var contentType: String
        var width: Int
        var height: Int
    }

    /// The most pixels on a side taken: beyond it a header is more likely forged than a photo.
    static let maxSide = 20_000

    /// The image, or why the bytes are not one (a sentence for a 415/422 reply).
    static func sniff(_ bytes: [UInt8]) -> Result<Image, Refusal> {
        let found: Image?
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            found = png(bytes)
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            found = jpeg(bytes)
        } else {
            return .failure(
                Refusal(
                    code: "unsupported_image",
                    message: "the body is not a JPEG or PNG image (judged by its bytes, not its name or Content-Type)"))
        }
        guard let image = found else {
            return .failure(
                Refusal(
                    code: "invalid_image",
                    message: "the body starts like a \(bytes[0] == 0xFF ? "JPEG" : "PNG") but its header does not parse"))
        }
        guard (1...maxSide).contains(image.width), (1...maxSide).contains(image.height) else {
            return .failure(
                Refusal(
                    code: "invalid_image", message: "the image is \(image.width)×\(image.height); each side must be 1 to \(maxSide) pixels")
            )
        }
        return .success(image)
    }

    struct Refusal: Error, Equatable {
        var code: String
        var message: String
    }

    private static func png(_ bytes: [UInt8]) -> Image? {
        // Signature (8), then the first chunk: length 13, type IHDR, width and height (big-endian).
        guard bytes.count >= 33, bigEndian(bytes, 8, 4) == 13, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        return Image(contentType: "image/png", width: bigEndian(bytes, 16, 4), height: bigEndian(bytes, 20, 4))
    }

    private static func jpeg(_ bytes: [UInt8]) -> Image? {
        var index = 2
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            // Fill bytes and standalone markers (no length).
            if marker == 0xFF {
                index += 1
                continue
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index += 2
                continue
            }
            let length = bigEndian(bytes, index + 2, 2)
            guard length >= 2 else { return nil }
            // Start of frame (baseline, progressive, …; not DHT C4, JPG C8, DAC CC): precision, height, width.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 7, index + 9 <= bytes.count else { return nil }
                return Image(contentType: "image/jpeg", width: bigEndian(bytes, index + 7, 2), height: bigEndian(bytes, index + 5, 2))
            }
            // Start of scan or end of image before any frame: no dimensions.
            if marker == 0xDA || marker == 0xD9 { return nil }
            index += 2 + length
        }
        return nil
    }

    /// The unsigned big-endian number in `count` bytes from `start` (the caller has checked the bounds).
    static func bigEndian(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int {
        bytes[start..<start + count].reduce(0) { $0 << 8 | Int($1) }
    }
}
