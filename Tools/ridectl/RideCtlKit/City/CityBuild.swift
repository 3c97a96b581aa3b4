import ArgumentParser
import Cities
import Crypto
import Foundation
import RoadServers
import Roads

/// Makes a city bundle (docs/cities.md) in a work directory beside `out`, checks it loads, and only
/// then puts it in place: a failed build leaves the earlier bundle as it was, and no half-written one.
struct CityBuild {
    /// What the bundle holds, for the report.
    struct Report: CustomStringConvertible {
        var bundle: CityBundle
        var seconds: Double
        var description: String { "\(bundle.summary) in \(String(format: "%.1f", seconds)) s" }
    }

    var out: String

    /// From an OpenStreetMap extract, with the repository's scripts (osmium reads the extract).
    func build(extract: String, name: String, scripts: String) async throws -> Report {
        let started = ContinuousClock.now
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: extract))
        } catch {
            throw CityBuildError("\(extract): cannot be read (\(error.localizedDescription))")
        }
        guard Self.isPBF(bytes) else {
            throw CityBuildError(
                "\(extract): not an OpenStreetMap PBF extract (it does not start with an OSMHeader block); download one ending in .osm.pbf")
        }
        let (graphScript, placesScript) = ("\(scripts)/build-graph.py", "\(scripts)/build-places.py")
        for script in [graphScript, placesScript] where !FileManager.default.isReadableFile(atPath: script) {
            throw CityBuildError("\(script) is missing: --scripts names the repository's Tools/roads")
        }
        let python = try ToolRun.find("python3", package: "python3")
        _ = try ToolRun.find("osmium", package: "osmium-tool")
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let manifest = CityManifest(
            name: name, source: URL(fileURLWithPath: extract).lastPathComponent, sourceSHA256: digest, roads: CityManifest.roadsFile,
            places: CityManifest.placesFile)
        let bundle = try await assemble(manifest) { work in
            try await ToolRun.run(
                python, [graphScript, extract, "\(work)/\(CityManifest.roadsFile)"], what: "\(graphScript) reading the roads of \(extract)")
            try await ToolRun.run(
                python, [placesScript, extract, "\(work)/\(CityManifest.placesFile)", name],
                what: "\(placesScript) reading the places of \(extract)")
        }
        return Report(bundle: bundle, seconds: (ContinuousClock.now - started) / .seconds(1))
    }

    /// A synthetic city (`RoadGraph.syntheticCity`): roads only, no places.
    func synthetic(edges: Int, seed: UInt64, name: String) async throws -> Report {
        let started = ContinuousClock.now
        let graph = try RoadGraph.syntheticCity(edges: edges, seed: seed)
        let manifest = CityManifest(
            name: name, source: "synthetic: ridectl city synthetic --edges \(edges) --seed \(seed)", roads: CityManifest.roadsFile,
            places: nil)
        let bundle = try await assemble(manifest) { work in
            try Data(graph.encoded()).write(to: URL(fileURLWithPath: "\(work)/\(CityManifest.roadsFile)"))
        }
        return Report(bundle: bundle, seconds: (ContinuousClock.now - started) / .seconds(1))
    }

    /// Writes the manifest and the attribution, `files` the rest, loads the result, then replaces `out`.
    private func assemble(_ manifest: CityManifest, files: (String) async throws -> Void) async throws -> CityBundle {
        let target = URL(fileURLWithPath: out).standardizedFileURL
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: target.path, isDirectory: &isDirectory) {
            // Only a bundle is replaced: a readable manifest, and nothing a bundle does not hold.
            let held = Set((try? manager.contentsOfDirectory(atPath: target.path)) ?? [])
            guard isDirectory.boolValue, (try? CityManifest.read(target.appendingPathComponent(CityManifest.fileName).path)) != nil,
                held.isSubset(of: CityManifest.bundleFiles)
            else {
                throw CityBuildError("\(out) exists and is not a city bundle: choose another --out (nothing there is replaced)")
            }
        }
        let work = target.deletingLastPathComponent().appendingPathComponent(
            ".\(target.lastPathComponent).building-\(UUID().uuidString.prefix(8))")
        do {
            try manager.createDirectory(at: work, withIntermediateDirectories: true)
        } catch {
            throw CityBuildError("cannot make \(work.path): \(error.localizedDescription)")
        }
        defer { try? manager.removeItem(at: work) }
        try await files(work.path)
        var manifest = manifest
        // A metropolitan graph's hierarchy is made once, here, so its services start at once.
        let roadBytes = Array(try Data(contentsOf: work.appendingPathComponent(manifest.roads)))
        let roads = try RoadGraph(decoding: roadBytes)
        guard !roads.edges.isEmpty else {
            throw CityBuildError(
                "\(manifest.source): no drivable roads in it (ways tagged highway=…): is it the extract of a city? Nothing was replaced")
        }
        if roads.edges.count > CityBundle.hierarchyThreshold {
            let hierarchy = ContractionHierarchy(graph: roads)
            try Data(hierarchy.encoded(graphChecksum: RoadGraph.checksum(ofFile: roadBytes) ?? 0)).write(
                to: work.appendingPathComponent(CityManifest.hierarchyFile))
            manifest.hierarchy = CityManifest.hierarchyFile
        }
        try manifest.encoded().write(to: work.appendingPathComponent(CityManifest.fileName))
        try Data(Self.attribution(manifest).utf8).write(to: work.appendingPathComponent("ATTRIBUTION.md"))
        let bundle = try CityBundle.load(directory: work.path)
        // The earlier bundle steps aside, the new one moves in, and only then is the earlier one
        // deleted: a failed move puts it back.
        let previous = work.deletingLastPathComponent().appendingPathComponent(
            ".\(target.lastPathComponent).previous-\(UUID().uuidString.prefix(8))")
        let replacing = manager.fileExists(atPath: target.path)
        if replacing { try manager.moveItem(at: target, to: previous) }
        do {
            try manager.moveItem(at: work, to: target)
        } catch {
            if replacing { try? manager.moveItem(at: previous, to: target) }
            throw CityBuildError("cannot put the bundle in \(out) (\(error.localizedDescription)); the earlier one stays")
        }
        if replacing { try? manager.removeItem(at: previous) }
        return bundle
    }

    /// Runs `work`, printing the bundle it made, or the error (exit 1) under `ridectl city <command>`.
    func reporting(_ command: String, _ work: (CityBuild) async throws -> Report) async throws {
        do {
            Output.out("\(out): \(try await work(self))\n")
        } catch {
            Output.err("ridectl city \(command): \(error)\n")
            throw ExitCode(1)
        }
    }

    /// A city's name as the manifest takes it (`CityManifest.read` checks the same length).
    static func check(name: String) throws {
        guard (1...100).contains(name.count), !name.contains("\n") else { throw ValidationError("--name: 1 to 100 characters on one line") }
    }

    /// An extract's first block is a BlobHeader (a 4-byte big-endian length, then protobuf) of type "OSMHeader".
    static func isPBF(_ bytes: Data) -> Bool {
        guard bytes.count > 16 else { return false }
        let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard (8...64 * 1024).contains(length), bytes.count >= 4 + length else { return false }
        return bytes[4..<(4 + length)].range(of: Data("OSMHeader".utf8)) != nil
    }

    static func attribution(_ manifest: CityManifest) -> String {
        if manifest.places == nil && manifest.sourceSHA256 == nil {
            return "# \(manifest.name)\n\nA synthetic city (\(manifest.source)): made-up streets, no map data.\n"
        }
        return """
            # \(manifest.name) — attribution and licence

            Map data © OpenStreetMap contributors, available under the
            [Open Database License (ODbL) 1.0](https://opendatacommons.org/licenses/odbl/1-0/)
            (see also https://www.openstreetmap.org/copyright).

            This bundle is a derived database: the drivable road network (`\(manifest.roads)`) and the
            streets, addresses and named places (`\(manifest.places ?? "")`) of the OpenStreetMap extract
            `\(manifest.source)` (SHA-256 \(manifest.sourceSHA256 ?? "unknown")), made with
            `ridectl city build` (docs/cities.md). It is under the same licence.

            """
    }
}

/// A bundle that could not be made; the message names the file or tool and what went wrong.
struct CityBuildError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
