import Crypto
import Foundation
import RideModels
import Wire

/// A delivery of HyperTrack's webhooks, checked and read into what the platform does with it:
/// the devices' locations (to tracking, as their phones' batches are) and the trip arrivals HyperTrack
/// detected (reported as the order's driver's own, which orders checks against the device's last
/// position). Every other event is acknowledged and ignored, as HyperTrack asks of receivers.
struct HyperTrackDelivery: Equatable {
    struct Arrival: Equatable {
        var index: Int
        var deviceID: String
        var orderID: String
    }

    struct Ignored: Equatable {
        var index: Int
        var type: String
        var reason: String
    }

    /// Each device's locations, oldest first.
    var locations: [String: [DeviceLocation]] = [:]
    /// Which event each device's locations came from.
    var locationEvents: [String: [Int]] = [:]
    var arrivals: [Arrival] = []
    var ignored: [Ignored] = []
    var count = 0

    static let maximumEvents = 1000
    /// How old (by its `created_at`) an event may be: HyperTrack retries for about a minute; an
    /// older delivery is a replay.
    static let maximumAge: TimeInterval = 15 * 60

    /// The signature HyperTrack sends in `x-hypertrack-signature`: the hex HMAC-SHA256 of the body
    /// with the webhook secret (a `sha256=` prefix is allowed). Compared in constant time.
    static func signatureIsValid(_ header: String, body: [UInt8], secret: String) -> Bool {
        let given = header.hasPrefix("sha256=") ? String(header.dropFirst(7)) : header
        guard given.utf8.count == 64, let bytes = hexBytes(given) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: body, using: SymmetricKey(data: Array(secret.utf8)))
    }

    static func signature(body: [UInt8], secret: String) -> String {
        HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8))).map { String(format: "%02x", $0) }
            .joined()
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            guard let nibble = character.hexNibble else { return nil }
            if let value = high {
                bytes.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }

    /// The events of `body`: a JSON array of at most `maximumEvents` objects, each with a `type`
    /// and a `created_at` within `maximumAge` of `now`. A problem names the event and its field.
    init(body: [UInt8], now: Date = Date()) throws(HyperTrackWebhookProblem) {
        guard let json = try? JSONCoding.decode(JSONValue.self, from: body), let events = json.arrayValue else {
            throw .malformed("the body is not a JSON array of events")
        }
        guard (1...Self.maximumEvents).contains(events.count) else {
            throw .malformed("a delivery holds 1 to \(Self.maximumEvents) events, not \(events.count)")
        }
        count = events.count
        for (index, event) in events.enumerated() {
            let at = "events[\(index)]"
            guard event.objectValue != nil, let type = event["type"]?.stringValue else {
                throw .malformed("\(at).type: required, a string")
            }
            guard let created = event["created_at"]?.stringValue.flatMap(RFC3339.parse) else {
                throw .malformed("\(at).created_at: required, an RFC 3339 time")
            }
            guard now.timeIntervalSince(created) <= Self.maximumAge, created.timeIntervalSince(now) <= 300 else {
                throw .stale(
                    "\(at).created_at \(RFC3339.format(created)) is more than \(Int(Self.maximumAge / 60)) minutes from now: a replayed delivery"
                )
            }
            switch (type, event["data"]?["value"]?.stringValue) {
            case ("location", _):
                let (deviceID, location) = try Self.location(event, at: at)
                locations[deviceID, default: []].append(location)
                locationEvents[deviceID, default: []].append(index)
            case ("trip", "destination_arrival"):
                let deviceID = try Self.deviceID(event, at: at)
                guard let orderID = event["data"]?["trip_metadata"]?["order_id"]?.stringValue, (1...128).contains(orderID.utf8.count) else {
                    ignored.append(Ignored(index: index, type: type, reason: "no trip_metadata.order_id: not a ride of this platform"))
                    continue
                }
                arrivals.append(Arrival(index: index, deviceID: deviceID, orderID: orderID))
            case ("trip", let value):
                ignored.append(
                    Ignored(index: index, type: type, reason: "trip \(value ?? "event"): trips start and end with the ride here"))
            case ("device_status", _):
                ignored.append(Ignored(index: index, type: type, reason: "a device's activity follows from its locations here"))
            default:
                ignored.append(Ignored(index: index, type: type, reason: "not used"))
            }
        }
        for device in locations.keys { locations[device]?.sort { $0.recordedAt < $1.recordedAt } }
    }

    static func deviceID(_ event: JSONValue, at: String) throws(HyperTrackWebhookProblem) -> String {
        guard let id = event["device_id"]?.stringValue, (1...128).contains(id.utf8.count),
            id.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw .malformed("\(at).device_id: required, \(TextPatterns.deviceIDMeaning)")
        }
        return id
    }

    /// A location event as tracking takes a fix: GeoJSON `[longitude, latitude]`, its time, and speed, accuracy and bearing when given.
    static func location(_ event: JSONValue, at: String) throws(HyperTrackWebhookProblem) -> (String, DeviceLocation) {
        let deviceID = try deviceID(event, at: at)
        let data = event["data"]
        guard let coordinates = data?["geometry"]?["coordinates"]?.arrayValue, coordinates.count >= 2,
            let longitude = coordinates[0].numberValue, let latitude = coordinates[1].numberValue, (-180...180).contains(longitude),
            (-90...90).contains(latitude)
        else { throw .malformed("\(at).data.geometry.coordinates: [longitude, latitude] within ±180 and ±90") }
        guard let recorded = (event["recorded_at"] ?? event["created_at"])?.stringValue.flatMap(RFC3339.parse) else {
            throw .malformed("\(at).recorded_at: an RFC 3339 time")
        }
        func optional(_ name: String, _ range: ClosedRange<Double>) throws(HyperTrackWebhookProblem) -> Double? {
            guard let value = data?[name], value != .null else { return nil }
            guard let number = value.numberValue, range.contains(number) else {
                throw .malformed("\(at).data.\(name): a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let location = DeviceLocation(
            latitude: latitude, longitude: longitude, recordedAt: recorded, accuracy: try optional("accuracy", 0...100_000),
            speed: try optional("speed", 0...200),
            bearing: try optional("bearing", 0...360).map { $0 == 360 ? 0 : $0 })
        return (deviceID, location)
    }
}

/// Why a delivery was refused whole: nothing of it was done.
enum HyperTrackWebhookProblem: Error, Equatable {
    case malformed(String)
    case stale(String)
}

extension UInt8 {
    fileprivate var hexNibble: UInt8? {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x61...0x66: self - 0x61 + 10
        case 0x41...0x46: self - 0x41 + 10
        default: nil
        }
    }
}
