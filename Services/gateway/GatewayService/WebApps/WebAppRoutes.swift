import Geo
import HTTPTypes
import Hummingbird
import Roads

/// `/app/rider` and `/app/driver`: the apps in a browser, served by the gateway itself (no build
/// step, nothing from elsewhere), and the files they load. They call the same `/v1` routes as any
/// app, with the user's own tokens. Their content security policy allows scripts and styles from
/// the gateway only — nothing inline.
struct WebAppRoutes {
    /// Where the map opens: the city's centre.
    let centre: GeoPoint

    /// Each file the pages load: its name under `/app/`, its media type and its text.
    static let files: [(name: String, mediaType: String, what: String, text: String)] = [
        ("app.js", "text/javascript", "The apps' shared script: session, calls, live sockets, the map", WebAppCommonScript.source),
        ("rider.js", "text/javascript", "The rider app's script", RiderAppScript.source),
        ("driver.js", "text/javascript", "The driver app's script", DriverAppScript.source),
        ("app.css", "text/css", "The apps' stylesheet", WebAppStyle.source),
    ]

    func register(on routes: RecordedRoutes) {
        for app in WebAppPage.App.allCases {
            let page = HTMLPage(WebAppPage.html(app, centre: centre), sources: "'self'")
            let doc = RouteDoc(
                "The \(app.rawValue) app (HTML): \(app == .rider ? "book, follow, chat, pay and rate a ride" : "go online, take offers, drive, chat, see earnings")",
                tag: .apps, replies: [.init(status: 200, description: "an HTML page", content: .html)], callsServices: false)
            routes.on(.get, "app/\(app.rawValue)", doc) { _, _ in page.response() }
        }
        for file in Self.files {
            let body = ByteBuffer(string: file.text)
            let doc = RouteDoc(
                file.what, tag: .apps, replies: [.init(status: 200, description: file.what, content: .text(file.mediaType))],
                callsServices: false)
            routes.on(.get, "app/\(file.name)", doc) { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "\(file.mediaType); charset=utf-8", .cacheControl: "no-cache"],
                    body: .init(byteBuffer: body))
            }
        }
    }

    /// The middle of the city's roads' bounding box (the map's first view).
    static func centre(of roads: RoadGraph) -> GeoPoint {
        guard let first = roads.points.first else { return GeoPoint(latitude: 0, longitude: 0) }
        var (south, north, west, east) = (first.latitude, first.latitude, first.longitude, first.longitude)
        for point in roads.points {
            (south, north) = (min(south, point.latitude), max(north, point.latitude))
            (west, east) = (min(west, point.longitude), max(east, point.longitude))
        }
        return GeoPoint(latitude: (south + north) / 2, longitude: (west + east) / 2)
    }
}
