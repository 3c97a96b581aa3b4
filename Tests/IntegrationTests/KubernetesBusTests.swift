import Bus
import Foundation
import TestProcess
import Testing

/// The bus on Kubernetes (docs/operations.md, Two buses): two pods, each reachable by its own name,
/// and every service naming both, so that either may stop.
extension KubernetesTests {
    @Test(arguments: KubernetesManifests.overlays) func theBusRunsTwoPodsAndEveryServiceNamesBoth(_ overlay: String) async throws {
        let objects = try await K.objects(overlay)
        let workloads = K.workloads(objects)
        let bus = try #require(workloads.first { K.platformContainers($0).contains { K.command($0).first == "ride-bus" } })
        #expect(bus.kind == "StatefulSet" && bus.replicas == 2, "\(overlay): the bus is a \(bus.kind) of \(bus.replicas)")
        let statefulSet = try #require(K.named(objects, kind: "StatefulSet").first { K.name($0) == bus.name })
        let serviceName = K.map(statefulSet["spec"])["serviceName"] as? String ?? ""
        let headless = try #require(
            K.named(objects, kind: "Service").first { K.name($0) == serviceName }, "\(overlay): no Service \(serviceName)")
        let service = K.map(headless["spec"])
        // Headless, publishing each pod's name before it is ready: bus-0.bus, bus-1.bus.
        #expect(service["clusterIP"] as? String == "None" && service["publishNotReadyAddresses"] as? Bool == true, "\(overlay): \(service)")
        let selects = { (labels: [String: Any]) in !labels.isEmpty && labels.allSatisfy { bus.labels[$0.key] == $0.value as? String } }
        #expect(selects(K.map(service["selector"])), "\(overlay): the Service \(serviceName) selects the bus's pods")
        // Apart where the cluster has room: a node lost takes one bus.
        let apart = K.list(K.map(K.map(bus.pod["affinity"])["podAntiAffinity"])["preferredDuringSchedulingIgnoredDuringExecution"]).map {
            K.map($0["podAffinityTerm"])
        }
        #expect(
            apart.contains {
                $0["topologyKey"] as? String == "kubernetes.io/hostname" && selects(K.map(K.map($0["labelSelector"])["matchLabels"]))
            })
        let budgets = K.named(objects, kind: "PodDisruptionBudget").map { K.map($0["spec"]) }.filter {
            selects(K.map(K.map($0["selector"])["matchLabels"]))
        }
        #expect(budgets.count == 1 && budgets.first?["maxUnavailable"] as? Int == 1, "\(overlay): a drain takes one bus at a time")

        let command = K.command(try #require(K.platformContainers(bus).first))
        let keys = try Self.scratch()
        _ = try await TestProcess.output(Binaries.ridectl, ["keys", "init", keys.path])
        let handMade = try K.handMadeSecrets(keys: keys)
        for workload in workloads where workload.name != bus.name {
            for container in K.platformContainers(workload) {
                let launch = try K.launch(
                    container, of: workload, ordinal: 0, in: objects, handMade: handMade, root: keys.appendingPathComponent(workload.name))
                for (variable, flag) in [("RIDE_BUS_PUB", "--pub"), ("RIDE_BUS_SUB", "--sub"), ("RIDE_BROKER", "--broker")] {
                    let port = K.flagPort(command, flag) ?? 0
                    let expected = (0..<bus.replicas).map { "tcp://\(bus.name)-\($0).\(serviceName):\(port)" }
                    #expect(
                        BusAddress.endpoints(launch.environment[variable] ?? "") == expected,
                        "\(overlay) \(workload.name): \(variable) names every bus pod's \(flag)")
                }
            }
        }
    }
}
