import Bus

/// The Markdown tables of the contract that the docs carry between markers
/// (`<!-- ops: orders -->` … `<!-- /ops -->`, `<!-- events -->` … `<!-- /events -->`); a test
/// compares them with the docs, and `ridectl contract --markdown` prints them to paste.
public enum ContractTables {
    /// The ops of one service: name, params, reply, what it does.
    public static func ops(of service: String) -> String {
        var lines = ["| op | params | reply | what it does |", "|---|---|---|---|"]
        for op in RideContract.ops(of: service) {
            lines.append(
                "| `\(op.name)` | `\(OpDescriptor.typeName(op.paramsType))` | `\(OpDescriptor.typeName(op.replyType))` | \(op.summary) |")
        }
        return lines.joined(separator: "\n")
    }

    /// Every event kind: topic, CloudEvents type, payload, source, what it means.
    public static var events: String {
        var lines = ["| topic | type | payload | source | what happened |", "|---|---|---|---|---|"]
        for event in RideContract.events {
            let topic = event.key.map { "\(event.topic)<\($0)>" } ?? event.topic
            lines.append(
                "| `\(topic)` | `\(event.type)` | `\(OpDescriptor.typeName(event.payloadType))` | \(event.source) | \(event.summary) |")
        }
        return lines.joined(separator: "\n")
    }

    /// Every role on a secured bus: what it serves, calls, publishes and hears (`Roles`).
    public static var roles: String {
        let code = { (items: [String]) in
            items.isEmpty ? "—" : items.map { "`\($0.isEmpty ? "(every topic)" : $0)`" }.joined(separator: ", ")
        }
        var lines = ["| role (key name) | what it is | serves | calls | publishes | subscribes to |", "|---|---|---|---|---|---|"]
        for role in Roles.all {
            let calls = code(role.callsServices.map { "\($0).*" } + role.calls.map(\.fullName))
            let subscribes = code(role.subscribes)
            lines.append("| `\(role.name)` | \(role.summary) | \(code(role.serves)) | \(calls) | \(code(role.publishes)) | \(subscribes) |")
        }
        return lines.joined(separator: "\n")
    }

    /// `text` with the table between `<!-- name -->` and `<!-- /closing -->` replaced by `table`,
    /// or nil when the markers are not there.
    public static func replacing(in text: String, open: String, close: String, with table: String) -> String? {
        guard let start = text.range(of: open), let end = text.range(of: close, range: start.upperBound..<text.endIndex) else { return nil }
        return text.replacingCharacters(in: start.upperBound..<end.lowerBound, with: "\n" + table + "\n")
    }
}

extension ContractTables {
    /// The docs pages that carry tables, relative to the repository, and each one's tables:
    /// (opening marker, closing marker, table).
    public static var pages: [(path: String, tables: [(open: String, close: String, table: String)])] {
        BusContract.Service.all.map { service in
            ("docs/services/\(service).md", [("<!-- ops: \(service) -->", "<!-- /ops -->", ops(of: service))])
        } + [
            ("docs/design.md", [("<!-- events -->", "<!-- /events -->", events)]),
            ("docs/security.md", [("<!-- roles -->", "<!-- /roles -->", roles)]),
        ]
    }

    /// `text` with every table of `tables` brought up to date; nil when a marker is missing.
    public static func updating(_ text: String, tables: [(open: String, close: String, table: String)]) -> String? {
        var text = text
        for (open, close, table) in tables {
            guard let updated = replacing(in: text, open: open, close: close, with: table) else { return nil }
            text = updated
        }
        return text
    }
}
