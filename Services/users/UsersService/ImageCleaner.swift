/// The bytes of a photo to store: the whole file walked to its end and rebuilt from what a photo
/// needs. Whatever rides behind a valid header — trailing bytes after the end of the image, chunks
/// whose CRC does not match, an HTML page — is refused; metadata is left out (EXIF with the
/// camera's GPS position, XMP, comments, PNG text chunks), since a driver's photo is public.
/// The compressed pixels are checked for framing (PNG chunks and CRCs, JPEG byte stuffing), not
/// decoded.
enum ImageCleaner {
    /// The cleaned bytes, or why the file is not a whole image (a phrase for a 422).
    static func clean(_ bytes: [UInt8], contentType: String) -> Result<[UInt8], ImageSniffer.Refusal> {
        let cleaned = contentType == "image/png" ? png(bytes) : jpeg(bytes)
        return cleaned.mapError { ImageSniffer.Refusal(code: "invalid_image", message: "the image is not whole: \($0.reason)") }
    }

    struct Problem: Error {
        let reason: String
    }

    /// PNG chunks a photo keeps: the critical ones and those that say how to show its colours.
    static let keptPNGChunks: Set<String> = ["IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "pHYs"]

    static func png(_ bytes: [UInt8]) -> Result<[UInt8], Problem> {
        var cleaned = Array(bytes.prefix(8))
        var index = 8
        var sawData = false
        while bytes.count - index >= 12 {
            let length = ImageSniffer.bigEndian(bytes, index, 4)
            guard length <= bytes.count - index - 12 else { return .failure(Problem(reason: "a chunk runs past the end of the file")) }
            let type = Array(bytes[index + 4..<index + 8])
            guard type.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                return .failure(Problem(reason: "a chunk's type is not four letters"))
            }
            let name = String(decoding: type, as: UTF8.self)
            let end = index + 12 + length
            guard Int(CRC32.checksum(bytes[index + 4..<end - 4])) == ImageSniffer.bigEndian(bytes, end - 4, 4) else {
                return .failure(Problem(reason: "chunk \(name)'s CRC does not match its bytes"))
            }
            guard index > 8 || name == "IHDR" else { return .failure(Problem(reason: "the first chunk is \(name), not IHDR")) }
            let critical = (0x41...0x5A).contains(type[0])
            guard !critical || keptPNGChunks.contains(name) else {
                return .failure(Problem(reason: "critical chunk \(name) is not one of PNG's"))
            }
            if name == "IDAT" { sawData = true }
            if keptPNGChunks.contains(name) { cleaned += bytes[index..<end] }
            index = end
            if name == "IEND" {
                guard sawData else { return .failure(Problem(reason: "it has no pixels (IDAT)")) }
                guard index == bytes.count else { return .failure(Problem(reason: "\(bytes.count - index) bytes follow its end (IEND)")) }
                return .success(cleaned)
            }
        }
        return .failure(Problem(reason: "it is cut short (no IEND)"))
    }

    /// JPEG segments a photo drops: EXIF and XMP (APP1), other applications' APP3–APP13 and APP15,
    /// and comments. Kept: JFIF (APP0), the ICC profile (APP2), Adobe's colour transform (APP14).
    static func dropsSegment(_ marker: UInt8) -> Bool {
        marker == 0xE1 || (0xE3...0xED).contains(marker) || marker == 0xEF || marker == 0xFE
    }

    static func jpeg(_ bytes: [UInt8]) -> Result<[UInt8], Problem> {
        var cleaned: [UInt8] = [0xFF, 0xD8]
        var index = 2
        var sawFrame = false
        var sawScan = false
        while index + 2 <= bytes.count {
            guard bytes[index] == 0xFF else { return .failure(Problem(reason: "a byte at \(index) is neither a marker nor in a scan")) }
            let marker = bytes[index + 1]
            switch marker {
            case 0xFF:  // a fill byte before a marker
                index += 1
                continue
            case 0xD9:
                guard sawScan else { return .failure(Problem(reason: "it ends before any scan (no pixels)")) }
                guard index + 2 == bytes.count else {
                    return .failure(Problem(reason: "\(bytes.count - index - 2) bytes follow its end (EOI)"))
                }
                return .success(cleaned + [0xFF, 0xD9])
            case 0x01, 0xD0...0xD7:
                cleaned += [0xFF, marker]
                index += 2
                continue
            case 0x00, 0xD8:
                return .failure(Problem(reason: "marker \(marker) at \(index) is out of place"))
            default: break
            }
            guard index + 4 <= bytes.count else { return .failure(Problem(reason: "it is cut short in a segment's length")) }
            let length = ImageSniffer.bigEndian(bytes, index + 2, 2)
            guard length >= 2, index + 2 + length <= bytes.count else {
                return .failure(Problem(reason: "a segment runs past the end of the file"))
            }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) { sawFrame = true }
            if !dropsSegment(marker) { cleaned += bytes[index..<index + 2 + length] }
            index += 2 + length
            guard marker == 0xDA else { continue }
            guard sawFrame else { return .failure(Problem(reason: "a scan comes before any frame")) }
            sawScan = true
            // The entropy-coded data: any 0xFF in it is stuffed (FF 00) or a restart marker; the
            // next other marker ends it.
            let start = index
            while index < bytes.count {
                guard bytes[index] == 0xFF else {
                    index += 1
                    continue
                }
                guard index + 1 < bytes.count else { return .failure(Problem(reason: "it is cut short in a scan")) }
                let next = bytes[index + 1]
                guard next == 0x00 || (0xD0...0xD7).contains(next) else { break }
                index += 2
            }
            cleaned += bytes[start..<index]
        }
        return .failure(Problem(reason: "it is cut short (no EOI)"))
    }
}

/// CRC-32 as PNG (and zlib) compute it: polynomial 0xEDB88320, reflected, inverted.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        ~bytes.reduce(UInt32.max) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
