import Bus

extension RideContract {
    /// What a service's `--help` says of its contract, from the declarations: its ops on the broker
    /// and the events it publishes.
    public static func helpSummary(of service: String) -> String {
        let ops = ops(of: service).map(\.name) + ["ping"]
        let published = events.filter { $0.source == service }.map { $0.topic + ($0.key.map { "<\($0)>" } ?? "") }
        let said = "Ops on the broker (service \"\(service)\"): \(ops.joined(separator: ", "))."
        return published.isEmpty ? said : said + " Events (source \(service)): \(published.joined(separator: ", "))."
    }
}
