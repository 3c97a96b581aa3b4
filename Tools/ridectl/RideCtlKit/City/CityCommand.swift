import ArgumentParser
import Cities
import Foundation

/// `ridectl city`: city bundles, what `--city` / `RIDE_CITY` loads (docs/cities.md).
struct CityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "city", abstract: "Make city bundles: roads, street map and places for --city / RIDE_CITY.",
        subcommands: [CityBuildCommand.self, CitySyntheticCommand.self, CityShowCommand.self])
}

/// `ridectl city build EXTRACT.osm.pbf --out DIR`.
struct CityBuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Make a city bundle from an OpenStreetMap extract (.osm.pbf): the road graph, the street map and the place index.",
        discussion: """
            Runs Tools/roads/build-graph.py and build-places.py (python3 and osmium-tool) on the \
            extract, writes city.json and ATTRIBUTION.md, loads the result to check it, and only then \
            replaces --out. Needs the repository's Tools/roads (--scripts).
            """)

    @Argument(help: "The OpenStreetMap extract, e.g. a city's .osm.pbf from download.geofabrik.de or extract.bbbike.org.")
    var extract: String

    @Option(help: "The bundle directory to write; an earlier bundle there is replaced, any other directory is refused.")
    var out: String

    @Option(help: "The city's name, as logs and the places' area say it (default: the extract's file name without .osm.pbf).")
    var name: String?

    @Option(help: "The repository's Tools/roads, where the build scripts are.")
    var scripts = "Tools/roads"

    func run() async throws {
        let cityName = name ?? URL(fileURLWithPath: extract).lastPathComponent.replacingOccurrences(of: ".osm.pbf", with: "")
        try CityBuild.check(name: cityName)
        Output.err("ridectl city build: \(extract) → \(out)…\n")
        try await CityBuild(out: out).reporting("build") { try await $0.build(extract: extract, name: cityName, scripts: scripts) }
    }
}

/// `ridectl city synthetic --edges N --out DIR`: a made-up metropolis for benchmarks.
struct CitySyntheticCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synthetic",
        abstract:
            "Make a synthetic city bundle of at least --edges directed road edges (a grid with avenues and one-way streets; no places).")

    @Option(help: "Directed road edges, at least (1 000 000: a metropolitan graph).") var edges = 1_000_000
    @Option(help: "Seed of the streets' jitter.") var seed: UInt64 = 1
    @Option(help: "The bundle directory to write; an earlier bundle there is replaced.") var out: String
    @Option(help: "The city's name.") var name = "Synthetic"

    mutating func validate() throws {
        guard (100...20_000_000).contains(edges) else { throw ValidationError("--edges must be 100 to 20000000") }
        try CityBuild.check(name: name)
    }

    func run() async throws {
        try await CityBuild(out: out).reporting("synthetic") { try await $0.synthetic(edges: edges, seed: seed, name: name) }
    }
}

/// `ridectl city show [DIR]`: what a bundle holds, loaded as a service loads it.
struct CityShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Load a city bundle as the services do and print what it holds (the built-in city without a directory).")

    @Argument(help: "A city bundle directory.") var directory: String?

    func run() async throws {
        do {
            let bundle = try CitySetting(path: directory).load()
            Output.out("\(bundle.summary)\n")
        } catch {
            Output.err("ridectl city show: \(error)\n")
            throw ExitCode(1)
        }
    }
}
