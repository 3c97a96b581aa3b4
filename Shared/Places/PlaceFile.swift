import Geo

/// The places file as `Tools/roads/build-places.py` writes it (docs/places.md): a header
/// (`ride-places 1`, `area`, `count`, `fnv1a64` of the body), an empty line, then one entry per
/// line, eight tab-separated fields: kind (S street, T a point along a street, A address,
/// P place), latitude, longitude, name, Swedish name, street, house number, category.
struct PlaceFile: Sendable {
    static let format = "ride-places 1"

    var area = ""
    var entries: [PlaceEntry] = []
    /// Points along each street, for the reverse look-up away from any address.
    var streetPoints: [(point: GeoPoint, street: String)] = []
    /// The places whose own tags give no address (indices into `entries`).
    var placesWithoutAddress: [Int] = []

    init(bytes: [UInt8]) throws(PlaceFileError) {
        guard let split = bytes.indices.dropLast().first(where: { bytes[$0] == 0x0A && bytes[$0 + 1] == 0x0A }) else {
            throw PlaceFileError("places file: no header (expected '\(Self.format)' lines, then an empty line)")
        }
        let body = bytes[(split + 2)...]
        guard let header = String(validating: bytes[..<split], as: UTF8.self), let text = String(validating: body, as: UTF8.self) else {
            throw PlaceFileError("places file: not UTF-8")
        }
        let fields = try Self.header(header)
        area = fields["area"] ?? ""
        guard let count = fields["count"].flatMap({ Int($0) }) else { throw PlaceFileError("places file: the header has no count") }
        guard let checksum = fields["fnv1a64"] else { throw PlaceFileError("places file: the header has no fnv1a64 checksum") }
        let actual = Self.fnv1a64(body)
        guard checksum == actual else {
            throw PlaceFileError(
                "places file: checksum mismatch (header fnv1a64 \(checksum.prefix(20)), body \(actual)): the file is damaged")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        guard lines.count == count else {
            throw PlaceFileError("places file: the header counts \(count) entries, the body has \(lines.count)")
        }
        let firstLine = header.split(separator: "\n").count + 2
        for (offset, line) in lines.enumerated() {
            try read(line, number: firstLine + offset)
        }
    }

    private static func header(_ text: String) throws(PlaceFileError) -> [String: String] {
        let lines = text.split(separator: "\n")
        guard lines.first == Substring(format) else {
            throw PlaceFileError("places file: starts with '\(String(lines.first ?? "").prefix(40))', expected '\(format)'")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { throw PlaceFileError("places file: header line '\(line.prefix(40))' is not 'key value'") }
            fields[String(parts[0])] = String(parts[1])
        }
        return fields
    }

    private mutating func read(_ line: Substring, number: Int) throws(PlaceFileError) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 8 else { throw .line(number, "\(fields.count) fields, expected 8") }
        guard let latitude = Double(fields[1]), let longitude = Double(fields[2]) else {
            throw .line(number, "latitude and longitude must be numbers")
        }
        let point = GeoPoint(latitude: latitude, longitude: longitude)
        guard point.isValid else { throw .line(number, "\(latitude), \(longitude) is not a position") }
        let (name, alternate, street, houseNumber, category) = (fields[3], fields[4], fields[5], fields[6], fields[7])
        let alternateName = alternate.isEmpty ? nil : alternate
        switch fields[0] {
        case "S":
            guard !name.isEmpty else { throw .line(number, "a street without a name") }
            entries.append(
                PlaceEntry(kind: .street, name: name, alternateName: alternateName, category: nil, point: point, address: located(name)))
        case "T":
            guard !name.isEmpty else { throw .line(number, "a street point without a street") }
            streetPoints.append((point, name))
        case "A":
            guard !street.isEmpty, !houseNumber.isEmpty else { throw .line(number, "an address needs a street and a house number") }
            let address = "\(street) \(houseNumber)"
            entries.append(
                PlaceEntry(kind: .address, name: address, alternateName: nil, category: nil, point: point, address: located(address)))
        case "P":
            guard !name.isEmpty, !category.isEmpty else { throw .line(number, "a place needs a name and a category") }
            if street.isEmpty { placesWithoutAddress.append(entries.count) }
            let address = street.isEmpty ? located(name) : located("\(name), \(street) \(houseNumber)")
            entries.append(
                PlaceEntry(kind: .place, name: name, alternateName: alternateName, category: category, point: point, address: address))
        default:
            throw .line(number, "unknown kind '\(fields[0].prefix(8))' (S, T, A or P)")
        }
    }

    private func located(_ text: String) -> String {
        area.isEmpty ? text : "\(text), \(area)"
    }

    /// FNV-1a, 64 bits, as lower-case hex: what build-places.py writes in the header.
    static func fnv1a64(_ bytes: some Sequence<UInt8>) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
