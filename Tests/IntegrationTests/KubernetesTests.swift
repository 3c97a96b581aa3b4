import Foundation
import TestProcess
import Testing

/// `deploy/kubernetes/` stays true without a cluster: both overlays render with `kubectl kustomize`
/// (skipped where kubectl is not installed), every object is valid against a current Kubernetes
/// schema (`kubernetes-validate`, which `make test-deps` installs), and — as `ComposeTests` does for docker-compose.yml — each container's command
/// and environment, with its Secrets as files, is run through the real binary with `--check`.
@Suite(.enabled(if: KubernetesManifests.program("kubectl") != nil, "kubectl is not installed"), .timeLimit(.minutes(3)))
struct KubernetesTests {
    typealias K = KubernetesManifests

    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kubernetes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Keys from a real `ridectl keys init` in `scratch`/keys, and prod's hand-made Secrets made of them.
    static func standInSecrets(in scratch: URL) async throws -> (keys: URL, handMade: [String: [String: Data]]) {
        let keys = scratch.appendingPathComponent("keys")
        _ = try await TestProcess.output(Binaries.ridectl, ["keys", "init", keys.path])
        return (keys, try K.handMadeSecrets(keys: keys))
    }

    /// Like the other tools from PyPI (`pythonTool`), a missing kubernetes-validate fails the test.
    @Test(arguments: KubernetesManifests.overlays) func everyRenderedObjectIsValidAgainstTheKubernetesSchema(_ overlay: String) async throws
    {
        guard let validate = K.program("kubernetes-validate") else {
            throw TestFailure(
                "kubernetes-validate is not installed (`make test-deps` installs it in .build/python, which make puts first on PATH)")
        }
        let scratch = try Self.scratch()
        let rendered = scratch.appendingPathComponent("\(overlay).yaml")
        try await K.render(overlay).write(to: rendered, atomically: true, encoding: .utf8)
        let outcome = try await TestProcess.run(validate, ["--strict", "--quiet", rendered.path])
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        // The check can fail: the same objects with one misspelt field are refused.
        let broken = scratch.appendingPathComponent("broken.yaml")
        try String(contentsOf: rendered, encoding: .utf8).replacingOccurrences(of: "containerPort:", with: "containerPorts:")
            .write(to: broken, atomically: true, encoding: .utf8)
        #expect(try await TestProcess.run(validate, ["--strict", "--quiet", broken.path]).status != 0)
    }

    /// Every executable runs somewhere, from the image deploy/Dockerfile builds (named as in
    /// docker-compose.yml), probed on its own --http port, with requests, limits and a disruption budget.
    @Test(arguments: KubernetesManifests.overlays) func everyExecutableHasAProbedBudgetedWorkload(_ overlay: String) async throws {
        let objects = try await K.objects(overlay)
        let workloads = K.workloads(objects)
        let manifest = try String(contentsOf: ComposeTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let executables = manifest.matches(of: /\.executable\(name: "(ride-[a-z-]+)"/).map { String($0.output.1) }
        let commands = Set(workloads.flatMap(K.platformContainers).compactMap { K.command($0).first })
        #expect(executables.count >= 7 && Set(executables) == commands, "\(overlay): \(commands) run, the package builds \(executables)")
        let composeImage = try #require(try ComposeTests.document()["x-ride-image"] as? [String: Any])["image"] as? String ?? ""
        let imageName = composeImage.split(separator: ":").first.map(String.init) ?? ""
        let budgets = K.named(objects, kind: "PodDisruptionBudget").map {
            K.map(K.map(K.map($0["spec"])["selector"])["matchLabels"]).compactMapValues { $0 as? String }
        }
        for workload in workloads {
            for container in K.platformContainers(workload) {
                let command = K.command(container)
                let image = container["image"] as? String ?? ""
                #expect(
                    image.split(separator: "/").last?.split(separator: ":").first.map(String.init) == imageName,
                    "\(workload.name): \(image)")
                let http = try #require(K.flagPort(command, "--http"), "\(workload.name) sets --http")
                for (probe, path) in [("livenessProbe", "/livez"), ("readinessProbe", "/readyz")] {
                    let get = K.map(K.map(container[probe])["httpGet"])
                    #expect(get["path"] as? String == path, "\(workload.name): \(probe) asks \(path)")
                    #expect(
                        K.containerPort(get["port"], of: container) == http, "\(workload.name): \(probe) asks its own --http port \(http)")
                }
                let resources = K.map(container["resources"])
                for part in ["requests", "limits"] {
                    #expect(
                        K.map(resources[part])["cpu"] != nil && K.map(resources[part])["memory"] != nil,
                        "\(workload.name): \(part) of cpu and memory")
                }
            }
            let budgeted = budgets.contains { !$0.isEmpty && $0.allSatisfy { workload.labels[$0.key] == $0.value } }
            #expect(budgeted || workload.name == "postgres", "\(overlay): \(workload.name) has a PodDisruptionBudget")
        }
    }

    /// The binaries themselves accept each container's command and environment, with the Secrets'
    /// files where the pod would have them (prod's hand-made Secrets as stand-ins of the same keys),
    /// and every RIDE_* variable a container is given is one its binary's --help names.
    @Test(arguments: KubernetesManifests.overlays) func everyContainersCommandAndEnvironmentIsAcceptedByTheRealBinary(_ overlay: String)
        async throws
    {
        let objects = try await K.objects(overlay)
        let scratch = try Self.scratch()
        let (_, handMade) = try await Self.standInSecrets(in: scratch)
        var help: [String: String] = [:]
        var configured: Set<String> = []
        for workload in K.workloads(objects) {
            for container in K.platformContainers(workload) {
                let executable = "\(Binaries.directory)/\(K.command(container)[0])"
                #expect(FileManager.default.isExecutableFile(atPath: executable), "\(workload.name) runs \(executable)")
                if help[executable] == nil { help[executable] = try await TestProcess.output(executable, ["--help"]) }
                for ordinal in 0..<(workload.kind == "StatefulSet" ? workload.replicas : 1) {
                    let root = scratch.appendingPathComponent("\(workload.name)-\(ordinal)")
                    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
                    let launch = try K.launch(container, of: workload, ordinal: ordinal, in: objects, handMade: handMade, root: root)
                    // Only the pod's environment: nothing inherited from this shell.
                    var environment = launch.environment
                    environment["PATH"] = "/usr/bin:/bin"
                    let result = try await TestProcess.run(executable, launch.arguments + ["--check"], in: root, environment: environment)
                    #expect(result.status == 0, "\(overlay) \(workload.name)-\(ordinal): \(result.stderr)")
                    #expect(result.stdout.contains("configuration OK"), "\(overlay) \(workload.name): \(result.stdout)")
                    // --check does not read the token key: the file it names must be there.
                    if let file = launch.environment["RIDE_TOKEN_SECRET_FILE"] {
                        #expect(
                            (FileManager.default.contents(atPath: file)?.count ?? 0) >= 32,
                            "\(workload.name): the token key \(file) is mounted")
                    }
                    let named = (help[executable] ?? "").split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(
                        String.init)
                    for variable in K.list(container["env"]).compactMap({ $0["name"] as? String }) where variable.hasPrefix("RIDE_") {
                        #expect(named.contains(variable), "\(workload.name) sets \(variable), which \(executable) does not name")
                    }
                    configured.formUnion(named)
                }
            }
        }
        for settings in K.named(objects, kind: "ConfigMap") where K.name(settings).hasPrefix("ride-settings") {
            for key in K.map(settings["data"]).keys {
                #expect(configured.contains(key), "\(overlay): the setting \(key) is named by no binary that reads it")
            }
        }
    }

    /// Tracking's shards are a StatefulSet: pod K is shard K of N, N its replicas, each with an ingest
    /// Service of its own (a device's SDK lists them in shard order).
    @Test(arguments: KubernetesManifests.overlays) func theTrackingShardsAreTheStatefulSetsOrdinals(_ overlay: String) async throws {
        let objects = try await K.objects(overlay)
        let tracking = try #require(
            K.workloads(objects).first { K.platformContainers($0).contains { K.command($0).first == "ride-tracking" } })
        #expect(tracking.kind == "StatefulSet" && tracking.replicas >= 2, "\(overlay): tracking runs as a StatefulSet of shards")
        let container = try #require(K.platformContainers(tracking).first)
        let ingest = try #require(K.flagPort(K.command(container), "--ingest"))
        let keys = try Self.scratch()
        _ = try await TestProcess.output(Binaries.ridectl, ["keys", "init", keys.path])
        let handMade = try K.handMadeSecrets(keys: keys)
        for ordinal in 0..<tracking.replicas {
            let launch = try K.launch(
                container, of: tracking, ordinal: ordinal, in: objects, handMade: handMade,
                root: keys.appendingPathComponent("pod-\(ordinal)"))
            let shard =
                launch.environment["RIDE_TRACKING_SHARD"] ?? launch.arguments.firstIndex(of: "--shard").map { launch.arguments[$0 + 1] }
            #expect(shard == "\(ordinal)/\(tracking.replicas)", "\(overlay): pod \(tracking.name)-\(ordinal) is shard \(shard ?? "0/1")")
            let services = K.named(objects, kind: "Service").filter {
                K.map(K.map($0["spec"])["selector"])["statefulset.kubernetes.io/pod-name"] as? String == "\(tracking.name)-\(ordinal)"
            }
            let ports = services.flatMap { K.list(K.map($0["spec"])["ports"]) }.map { K.containerPort($0["targetPort"], of: container) }
            #expect(services.count == 1 && ports == [ingest], "\(overlay): shard \(ordinal)'s own ingest Service on \(ingest): \(ports)")
        }
    }

    /// The autoscalers scale the gateway and orders (stateless, or idempotent on PostgreSQL) by CPU;
    /// tracking scales by its shard count, which an autoscaler cannot change (every shard's N would).
    @Test(arguments: KubernetesManifests.overlays) func theAutoscalersTargetTheGatewayAndOrders(_ overlay: String) async throws {
        let objects = try await K.objects(overlay)
        let workloads = K.workloads(objects)
        var targets: Set<String> = []
        for autoscaler in K.named(objects, kind: "HorizontalPodAutoscaler") {
            let spec = K.map(autoscaler["spec"])
            let target = K.map(spec["scaleTargetRef"])
            let workload = workloads.first { $0.kind == target["kind"] as? String && $0.name == target["name"] as? String }
            #expect(workload != nil, "\(overlay): \(K.name(autoscaler)) scales \(target), which exists")
            let (low, high) = (spec["minReplicas"] as? Int ?? 1, spec["maxReplicas"] as? Int ?? 0)
            #expect(1 <= low && low < high, "\(overlay): \(K.name(autoscaler)) scales from \(low) to \(high)")
            for container in workload?.containers ?? [] {
                #expect(K.map(K.map(container["resources"])["requests"])["cpu"] != nil, "utilization needs a CPU request")
            }
            targets.insert(workload.flatMap { K.platformContainers($0).first.map { K.command($0)[0] } } ?? "")
        }
        #expect(targets == ["ride-gateway", "ride-orders"], "\(overlay): \(targets)")
    }

    /// By default no ingress; the platform's pods reach each other; from anywhere else only the
    /// gateway's --listen port and tracking's --ingest port.
    @Test(arguments: KubernetesManifests.overlays) func theNetworkPolicyExposesOnlyTheGatewayAndTheDeviceIngest(_ overlay: String)
        async throws
    {
        let objects = try await K.objects(overlay)
        let workloads = K.workloads(objects)
        let policies = K.named(objects, kind: "NetworkPolicy").map { K.map($0["spec"]) }
        let denyAll = policies.contains { policy in
            K.map(policy["podSelector"]).isEmpty && (policy["policyTypes"] as? [String] ?? []).contains("Ingress")
                && K.list(policy["ingress"]).isEmpty
        }
        #expect(denyAll, "\(overlay): a policy shuts every pod by default")
        var exposed: [String: Set<Int>] = [:]
        var reached: Set<String> = []
        for policy in policies {
            let selector = K.map(K.map(policy["podSelector"])["matchLabels"]).compactMapValues { $0 as? String }
            let selected = workloads.filter { workload in selector.allSatisfy { workload.labels[$0.key] == $0.value } }
            for rule in K.list(policy["ingress"]) {
                let from = K.list(rule["from"])
                if from.isEmpty {
                    for workload in selected {
                        exposed[workload.name, default: []].formUnion(K.list(rule["ports"]).compactMap { $0["port"] as? Int })
                    }
                    #expect(!K.list(rule["ports"]).isEmpty, "\(overlay): a rule from anywhere names its ports")
                } else {
                    #expect(from.allSatisfy { $0.keys.sorted() == ["podSelector"] }, "\(overlay): only pods of the namespace: \(from)")
                    let sources = from.map { K.map(K.map($0["podSelector"])["matchLabels"]).compactMapValues { $0 as? String } }
                    if sources.contains(where: { labels in
                        workloads.allSatisfy { workload in labels.allSatisfy { workload.labels[$0.key] == $0.value } }
                    }) {
                        reached.formUnion(selected.map(\.name))
                    }
                }
            }
        }
        #expect(reached == Set(workloads.map(\.name)), "\(overlay): every platform pod may be reached from the others: \(reached)")
        let command = { (name: String) in
            workloads.first { $0.name == name }.flatMap { K.platformContainers($0).first }.map(K.command) ?? []
        }
        let expected = [
            "gateway": Set([K.flagPort(command("gateway"), "--listen")].compactMap { $0 }),
            "tracking": Set([K.flagPort(command("tracking"), "--ingest")].compactMap { $0 }),
        ]
        #expect(exposed == expected && expected.values.allSatisfy { $0.count == 1 }, "\(overlay): \(exposed)")
    }

    /// Prod's edge (issue 38): TLS ends at an Ingress in front of the gateway, whose limits key on
    /// the address the controller appends (one hop); the ingest load balancers keep the phones'
    /// addresses; the gateway itself is never a load balancer of its own (plain HTTP to the world).
    @Test func theProductionEdgeEndsTLSAndKeepsTheClientsAddress() async throws {
        let objects = try await K.objects("prod")
        let ingress = try #require(
            K.named(objects, kind: "Ingress").first { K.name($0) == "gateway" }, "prod has an Ingress for the gateway")
        let spec = K.map(ingress["spec"])
        let tls = K.list(spec["tls"])
        #expect(tls.count == 1 && tls[0]["secretName"] as? String == "ride-gateway-tls", "\(tls)")
        let backends = K.list(spec["rules"]).flatMap { K.list(K.map($0["http"])["paths"]) }.map {
            K.map(K.map(K.map($0["backend"])["service"]))
        }
        #expect(backends.map { $0["name"] as? String } == ["gateway"], "\(backends)")
        let settings = try #require(K.named(objects, kind: "ConfigMap").first { K.name($0).hasPrefix("ride-settings") })
        #expect(K.map(settings["data"])["RIDE_FORWARDED_FOR_HOPS"] as? String == "1")
        for service in K.named(objects, kind: "Service") {
            let serviceSpec = K.map(service["spec"])
            if K.name(service) == "gateway" { #expect(serviceSpec["type"] == nil, "the gateway is reached through the Ingress only") }
            if K.name(service).hasPrefix("tracking-ingest-") {
                #expect(
                    serviceSpec["type"] as? String == "LoadBalancer" && serviceSpec["externalTrafficPolicy"] as? String == "Local",
                    "\(K.name(service))")
            }
        }
    }

    /// PostgreSQL by URL from a Secret: a StatefulSet in dev, an external database in prod (its Secret
    /// made by hand); users' token key is a mounted file, never a variable.
    @Test(arguments: KubernetesManifests.overlays) func theDatabaseIsAStatefulSetInDevAndExternalInProd(_ overlay: String) async throws {
        let objects = try await K.objects(overlay)
        let workloads = K.workloads(objects)
        let postgres = workloads.filter { $0.containers.contains { ($0["image"] as? String ?? "").hasPrefix("postgres:") } }
        #expect(postgres.map(\.kind) == (overlay == "dev" ? ["StatefulSet"] : []), "\(overlay): \(postgres.map(\.name))")
        #expect(K.named(objects, kind: "Secret").contains { K.name($0).hasPrefix("ride-database") } == (overlay == "dev"))
        for workload in workloads {
            for container in K.platformContainers(workload) {
                let env = K.list(container["env"])
                if let url = env.first(where: { $0["name"] as? String == "RIDE_DATABASE_URL" }) {
                    #expect(
                        K.map(K.map(url["valueFrom"])["secretKeyRef"])["key"] as? String == "url", "\(workload.name): the URL from a Secret"
                    )
                }
                #expect(!env.contains { $0["name"] as? String == "RIDE_TOKEN_SECRET" }, "\(workload.name): the token key is a file")
                if K.command(container).first == "ride-users" {
                    #expect(env.contains { $0["name"] as? String == "RIDE_TOKEN_SECRET_FILE" })
                }
            }
        }
        let prod = try String(contentsOf: K.directory.appendingPathComponent("overlays/prod/kustomization.yaml"), encoding: .utf8)
        let keys = try Self.scratch()
        _ = try await TestProcess.output(Binaries.ridectl, ["keys", "init", keys.path])
        for secret in try K.handMadeSecrets(keys: keys).keys {
            #expect(prod.contains(secret), "prod's kustomization.yaml says to make the Secret \(secret)")
        }
    }
}
