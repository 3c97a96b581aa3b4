import Foundation
import Testing

/// CURVE on Kubernetes (docs/operations.md, Kubernetes): every pod holds the server's public key
/// and its own role's secret key, and no other's; only the bus holds the list of whom it admits.
extension KubernetesTests {
    @Test(arguments: KubernetesManifests.overlays) func everyPodHoldsOnlyItsOwnKey(_ overlay: String) async throws {
        let objects = try await K.objects(overlay)
        let scratch = try Self.scratch()
        let (keys, handMade) = try await Self.standInSecrets(in: scratch)
        // Where the keys the pods get come from: dev's committed ones, prod's made by hand (here by `keys init`).
        let source = overlay == "dev" ? K.directory.appendingPathComponent("overlays/dev/curve-keys") : keys
        var admitted: Set<String> = []
        var roles: Set<String> = []
        for workload in K.workloads(objects) {
            for container in K.platformContainers(workload) {
                let root = scratch.appendingPathComponent(workload.name)
                let launch = try K.launch(container, of: workload, ordinal: 0, in: objects, handMade: handMade, root: root)
                let folder = try #require(launch.environment["RIDE_CURVE_KEYS"], "\(overlay) \(workload.name) runs with CURVE")
                let files = Set(
                    FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String }.filter {
                        $0.hasSuffix(".key") || $0.hasSuffix(".pub")
                    } ?? [])
                let executable = K.command(container)[0]
                let role = executable == "ride-bus" ? nil : String(executable.dropFirst("ride-".count))
                if let role { roles.insert(role) }
                let serves = ["ride-bus", "ride-tracking"].contains(executable)
                let secretKeys = Set(files.filter { $0.hasSuffix(".key") })
                #expect(
                    secretKeys == Set((role.map { ["clients/\($0).key"] } ?? []) + (serves ? ["server.key"] : [])),
                    "\(overlay) \(workload.name): \(files.sorted())")
                // The file named after the role holds that role's key.
                if let role {
                    let mounted = try String(contentsOfFile: "\(folder)/clients/\(role).key", encoding: .utf8)
                    #expect(
                        mounted == (try String(contentsOf: source.appendingPathComponent("clients/\(role).key"), encoding: .utf8)),
                        "\(overlay) \(workload.name)")
                }
                let publicKeys = files.filter { $0.hasSuffix(".pub") }
                if executable == "ride-bus" {
                    admitted = Set(
                        publicKeys.filter { $0.hasPrefix("clients/") }.map { String($0.dropFirst("clients/".count).dropLast(4)) })
                } else {
                    #expect(
                        publicKeys == ["server.pub"], "\(overlay) \(workload.name) needs only the server's public key: \(files.sorted())")
                }
            }
        }
        #expect(roles == ["users", "orders", "trips", "tracking", "notifications", "gateway"], "\(overlay): \(roles.sorted())")
        if overlay == "dev" {
            // Whom the bus admits: every process, and the operators' ridectl.
            #expect(admitted == roles.union(["operator"]), "\(overlay): the bus admits \(admitted.sorted())")
            let names = try FileManager.default.contentsOfDirectory(atPath: source.appendingPathComponent("clients").path).map {
                String($0.split(separator: ".")[0])
            }
            #expect(Set(names) == roles.union(["operator"]), "the dev keys: one per process and the operator's: \(names.sorted())")
        }
    }
}
