import Foundation
import Testing

@testable import Places

/// A damaged file is an error that says what is wrong, never a crash or a silently short index.
struct PlaceFileTests {
    static func file(_ body: String, count: Int? = nil, checksum: String? = nil, format: String = PlaceFile.format) -> [UInt8] {
        let bytes = Array(body.utf8)
        let header =
            "\(format)\narea Testville\ncount \(count ?? body.count { $0 == "\n" })\nfnv1a64 \(checksum ?? PlaceFile.fnv1a64(bytes))\n\n"
        return Array(header.utf8) + bytes
    }

    static let good = [
        "S\t60.1\t24.9\tTestikatu\tTestgatan\t\t\t", "T\t60.1\t24.91\tTestikatu\t\t\t\t", "A\t60.1\t24.9\t\t\tTestikatu\t3 a\t",
        "P\t60.1\t24.9\tKahvila\t\tTestikatu\t3 a\tamenity=cafe",
    ].map { $0 + "\n" }.joined()

    @Test func aWellFormedFile() throws {
        let index = try PlaceIndex(bytes: Self.file(Self.good))
        #expect(index.area == "Testville")
        #expect(index.entries.map(\.address) == ["Testikatu, Testville", "Testikatu 3 a, Testville", "Kahvila, Testikatu 3 a, Testville"])
        #expect(index.search("testgatan").first?.entry.name == "Testikatu")
    }

    @Test(arguments: [
        (file("S\t60.1\t24.9\tTestikatu\t\t\t\t\n", checksum: "0000000000000000"), "checksum mismatch"),
        (file(good, count: 3), "counts 3 entries"),
        (file(good, format: "ride-places 2"), "expected 'ride-places 1'"),
        (file("S\t60.1\t24.9\tTestikatu\t\t\t\n"), "line 6: 7 fields"),
        (file("S\tnorth\t24.9\tTestikatu\t\t\t\t\n"), "must be numbers"),
        (file("S\t95\t24.9\tTestikatu\t\t\t\t\n"), "is not a position"),
        (file("X\t60.1\t24.9\tTestikatu\t\t\t\t\n"), "unknown kind 'X'"),
        (file("A\t60.1\t24.9\t\t\tTestikatu\t\t\n"), "needs a street and a house number"),
        (file("T\t60.1\t24.9\tNowhere\t\t\t\t\n"), "has no street entry"),
        (Array("ride-places 1\ncount 1\n".utf8), "no header"),
        (Array("ride-places 1\ncount many\nfnv1a64 cbf29ce484222325\n\n".utf8), "has no count"),
        ([0xFF, 0xFE, 0x0A, 0x0A], "not UTF-8"),
        ([], "no header"),
    ])
    func aMalformedFileSaysWhatIsWrong(_ bytes: [UInt8], _ problem: String) {
        #expect(throws: PlaceFileError.self) { try PlaceIndex(bytes: bytes) }
        do {
            _ = try PlaceIndex(bytes: bytes)
        } catch {
            #expect(error.description.contains(problem), "\(error.description)")
        }
    }

    @Test func everyFlippedByteOfTheShippedFileIsCaught() throws {
        let bytes = try PlaceIndex.bundledBytes()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            var damaged = bytes
            let at = Int.random(in: 0..<damaged.count, using: &generator)
            damaged[at] ^= 0x20
            #expect(throws: PlaceFileError.self) { try PlaceIndex(bytes: damaged) }
        }
    }
}
