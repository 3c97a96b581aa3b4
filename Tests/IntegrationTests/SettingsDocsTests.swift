import Foundation
import Testing

/// docs/settings.md is every executable's `--help` options (flag, variable, default, what), made
/// from the executables themselves: `RIDE_WRITE_DOCS=1` writes it, and this test fails when it
/// differs from what they say. And every `RIDE_…` variable the code reads is named in the docs.
@Suite struct SettingsDocsTests {
    static let services = ["ride-bus", "ride-users", "ride-orders", "ride-trips", "ride-tracking", "ride-notifications", "ride-gateway"]
    static let file = ComposeTests.root.appendingPathComponent("docs/settings.md")

    struct Option: Equatable {
        var flag: String
        var variable: String
        var byDefault: String
        var what: String
    }

    /// The options of `command`'s help that have a variable.
    static func options(_ command: [String]) async throws -> [Option] {
        let help = try await runCommand("\(Binaries.directory)/\(command[0])", Array(command.dropFirst()) + ["--help"])
        guard help.status == 0 else { throw TestFailure("\(command.joined(separator: " ")) --help: \(help.stderr)") }
        var blocks: [(flag: String, text: String)] = []
        var inOptions = false
        for line in help.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("OPTIONS:") {
                inOptions = true
                continue
            }
            guard inOptions else { continue }
            if line.isEmpty || !line.hasPrefix(" ") { inOptions = !line.isEmpty && line.hasPrefix(" ") }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("  -") {
                let flag = trimmed.split(separator: " ").first.map(String.init) ?? trimmed
                let rest = trimmed.dropFirst(flag.count).trimmingCharacters(in: .whitespaces)
                let described =
                    rest.hasPrefix("<") ? String(rest.drop { $0 != ">" }.dropFirst()).trimmingCharacters(in: .whitespaces) : rest
                blocks.append((flag, described))
            } else if !trimmed.isEmpty, !blocks.isEmpty {
                blocks[blocks.count - 1].text += " " + trimmed
            }
        }
        let env = try Regex(#"\s*\[env: (RIDE_[A-Z0-9_]+)(?:, default: (.*))?\]$"#)
        return blocks.compactMap { block in
            guard let match = block.text.firstMatch(of: env) else { return nil }
            let what = String(block.text[..<match.range.lowerBound]).trimmingCharacters(in: .whitespaces)
            return Option(
                flag: block.flag, variable: String(match.output[1].substring ?? ""),
                byDefault: match.output[2].substring.map(String.init) ?? "", what: what)
        }
    }

    /// `ridectl`'s subcommands (and theirs), as its help lists them.
    static func subcommands(_ command: [String]) async throws -> [[String]] {
        let help = try await runCommand("\(Binaries.directory)/\(command[0])", Array(command.dropFirst()) + ["--help"])
        var found: [[String]] = []
        var inList = false
        for line in help.stdout.split(separator: "\n") {
            if line.hasPrefix("SUBCOMMANDS:") {
                inList = true
                continue
            }
            if inList, line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first, !name.contains("'") {
                found.append(command + [String(name)])
            } else if inList, !line.hasPrefix(" ") {
                inList = false
            }
        }
        var all: [[String]] = []
        for sub in found { all += [sub] + (command.count < 2 ? try await subcommands(sub) : []) }
        return all
    }

    static func markdown() async throws -> String {
        var text = """
            # Settings

            Every flag that has an environment variable, by executable, as its `--help` says it (the
            flag wins over the variable, the variable over the default). Made from the executables:
            `RIDE_WRITE_DOCS=1 swift test --filter SettingsDocsTests` writes this file, and the test
            fails when it is not what they say. [Operations](operations.md) tells what to set when.

            """
        let commands = services.map { [$0] } + (try await subcommands(["ridectl"]))
        for command in commands {
            let options = try await options(command)
            guard !options.isEmpty else { continue }
            text += "\n## `\(command.joined(separator: " "))`\n\n| flag | variable | default | what |\n|---|---|---|---|\n"
            for option in options {
                let cells = [option.flag, option.variable, option.byDefault].map {
                    $0.isEmpty ? "" : "`\($0.replacingOccurrences(of: "|", with: "\\|"))`"
                }
                text += "| \(cells.joined(separator: " | ")) | \(option.what.replacingOccurrences(of: "|", with: "\\|")) |\n"
            }
        }
        return text
    }

    @Test func docsSettingsIsWhatTheExecutablesSay() async throws {
        let made = try await Self.markdown()
        if ProcessInfo.processInfo.environment["RIDE_WRITE_DOCS"] != nil {
            try made.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let written = (try? String(contentsOf: Self.file, encoding: .utf8)) ?? ""
        #expect(
            written == made,
            "docs/settings.md differs from the executables' --help: RIDE_WRITE_DOCS=1 swift test --filter SettingsDocsTests")
        #expect(made.contains("RIDE_DATABASE_URL") && made.contains("## `ridectl up`"), "\(made.prefix(500))")
    }

    @Test func everyVariableTheCodeReadsIsInTheDocs() throws {
        let root = ComposeTests.root
        let variable = try Regex(#""(RIDE_[A-Z0-9_]+)""#)
        var read = Set<String>()
        for folder in ["Shared", "Services", "Tools"] {
            let files =
                FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)?.allObjects
                as? [URL] ?? []
            for file in files where file.pathExtension == "swift" {
                for match in try String(contentsOf: file, encoding: .utf8).matches(of: variable) {
                    read.insert(String(match.output[1].substring ?? ""))
                }
            }
        }
        let documents =
            (FileManager.default.enumerator(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)?.allObjects as? [URL]
            ?? [])
            .filter { $0.pathExtension == "md" } + [root.appendingPathComponent("README.md")]
        let docs = try documents.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
        #expect(read.count > 50, "\(read.count) variables read")
        let missing = read.filter { !docs.contains($0) }.sorted()
        #expect(missing.isEmpty, "read by the code, named nowhere in the docs: \(missing)")
    }
}
