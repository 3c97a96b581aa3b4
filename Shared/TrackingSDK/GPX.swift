import Foundation
import Geo
import Wire

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A GPX track: the `<trkpt>` points of a file, in order (track segments joined), with their times
/// and elevations when the file has them. `<rtept>` and `<wpt>` are read when there is no track.
public struct GPXTrack: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public var point: GeoPoint
        public var time: Date?
        public var elevation: Double?
    }

    public var name: String?
    public var points: [Point]

    public enum ParseError: Error, CustomStringConvertible, Equatable {
        case unreadable(String)
        case malformed(String)
        case empty

        public var description: String {
            switch self {
            case .unreadable(let path): "cannot read GPX file \(path)"
            case .malformed(let why): "not a valid GPX file: \(why)"
            case .empty: "the GPX file has no track points"
            }
        }
    }

    public static func parse(contentsOf path: String) throws -> GPXTrack {
        guard let data = FileManager.default.contents(atPath: path) else { throw ParseError.unreadable(path) }
        return try parse(data)
    }

    public static func parse(_ data: Data) throws -> GPXTrack {
        let reader = Reader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        guard parser.parse() else {
            throw ParseError.malformed(reader.problem ?? parser.parserError.map { "\($0)" } ?? "unknown XML error")
        }
        if let problem = reader.problem { throw ParseError.malformed(problem) }
        let points = reader.trackPoints.isEmpty ? (reader.routePoints.isEmpty ? reader.waypoints : reader.routePoints) : reader.trackPoints
        guard !points.isEmpty else { throw ParseError.empty }
        return GPXTrack(name: reader.name, points: points)
    }

    /// XMLParser's delegate: collects points, with their `<time>` and `<ele>` children.
    private final class Reader: NSObject, XMLParserDelegate {
        var trackPoints: [Point] = []
        var routePoints: [Point] = []
        var waypoints: [Point] = []
        var name: String?
        var problem: String?
        private var current: (element: String, point: Point)?
        private var text = ""
        private var depthOfName = 0

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            text = ""
            guard ["trkpt", "rtept", "wpt"].contains(element) else { return }
            guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init) else {
                problem = problem ?? "a <\(element)> without numeric lat and lon attributes"
                return
            }
            let point = GeoPoint(latitude: lat, longitude: lon)
            guard point.isValid else {
                problem = problem ?? "a <\(element)> at lat \(lat), lon \(lon) is out of range"
                return
            }
            current = (element, Point(point: point))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch element {
            case "time" where current != nil:
                current!.point.time = RFC3339.parse(value)
            case "ele" where current != nil:
                current!.point.elevation = Double(value)
            case "name" where current == nil && name == nil:
                name = value
            case "trkpt", "rtept", "wpt":
                if let (kind, point) = current {
                    switch kind {
                    case "trkpt": trackPoints.append(point)
                    case "rtept": routePoints.append(point)
                    default: waypoints.append(point)
                    }
                }
                current = nil
            default:
                break
            }
            text = ""
        }
    }
}
