import Foundation
import TestProcess
import Yams

/// `deploy/kubernetes/` as `kubectl kustomize` renders an overlay, and what a container of it would
/// be started with: its command, its environment (ConfigMaps, Secrets, the downward API and `$(VAR)`
/// expanded as Kubernetes does) and the files its Secret volumes put at its mount paths.
enum KubernetesManifests {
    typealias Object = [String: Any]

    static let overlays = ["dev", "prod"]
    static var directory: URL { ComposeTests.root.appendingPathComponent("deploy/kubernetes") }

    /// A program on PATH; nil where it is not installed.
    static func program(_ name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The overlay as `kubectl kustomize` renders it.
    static func render(_ overlay: String) async throws -> String {
        guard let kubectl = program("kubectl") else { throw TestFailure("kubectl is not installed") }
        return try await TestProcess.output(kubectl, ["kustomize", directory.appendingPathComponent("overlays/\(overlay)").path])
    }

    static func objects(_ overlay: String) async throws -> [Object] {
        let yaml = try await render(overlay)
        let objects = try Yams.load_all(yaml: yaml).compactMap { $0 as? Object }
        // load_all stops quietly at a document it cannot parse.
        guard objects.count == yaml.components(separatedBy: "\n---\n").count else {
            throw TestFailure("\(overlay): not every object parsed")
        }
        return objects
    }

    /// A Deployment or StatefulSet: its pod template's labels and spec.
    struct Workload {
        var kind: String
        var name: String
        var replicas: Int
        var labels: [String: String]
        var pod: Object
        var containers: [Object] { list(pod["containers"]) }
    }

    static func workloads(_ objects: [Object]) -> [Workload] {
        objects.filter { ["Deployment", "StatefulSet"].contains($0["kind"] as? String ?? "") }.map { object in
            let spec = map(object["spec"])
            let template = map(spec["template"])
            return Workload(
                kind: object["kind"] as? String ?? "", name: name(object), replicas: spec["replicas"] as? Int ?? 1,
                labels: map(map(template["metadata"])["labels"]).compactMapValues { $0 as? String }, pod: map(template["spec"]))
        }
    }

    /// The containers that run one of the platform's executables (not PostgreSQL's image).
    static func platformContainers(_ workload: Workload) -> [Object] {
        workload.containers.filter { command($0).first?.hasPrefix("ride") ?? false }
    }

    static func map(_ value: Any?) -> Object { value as? Object ?? [:] }
    static func list(_ value: Any?) -> [Object] { value as? [Object] ?? [] }
    static func name(_ object: Object) -> String { map(object["metadata"])["name"] as? String ?? "" }
    static func command(_ container: Object) -> [String] {
        ((container["command"] as? [Any]) ?? []).map { "\($0)" } + ((container["args"] as? [Any]) ?? []).map { "\($0)" }
    }
    static func named(_ objects: [Object], kind: String) -> [Object] { objects.filter { $0["kind"] as? String == kind } }

    /// The container port a probe's or Service's `port` names (a number, or a port's name).
    static func containerPort(_ port: Any?, of container: Object) -> Int? {
        if let number = port as? Int { return number }
        return list(container["ports"]).first { $0["name"] as? String == "\(port ?? "")" }?["containerPort"] as? Int
    }

    /// The value of a command's flag (`--http 0.0.0.0:9106` → its port).
    static func flagPort(_ arguments: [String], _ flag: String) -> Int? {
        arguments.firstIndex(of: flag).flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1].split(separator: ":").last.flatMap { Int($0) } : nil
        }
    }

    /// The Secrets prod's kustomization says to make by hand (rendered nowhere): stand-ins of the same
    /// keys, the CURVE ones from a real `ridectl keys init`.
    static func handMadeSecrets(keys: URL) throws -> [String: [String: Data]] {
        let clients = try FileManager.default.contentsOfDirectory(atPath: keys.appendingPathComponent("clients").path)
        func files(_ suffix: String) throws -> [String: Data] {
            Dictionary(
                uniqueKeysWithValues: try clients.filter { $0.hasSuffix(suffix) }.map {
                    ($0, try Data(contentsOf: keys.appendingPathComponent("clients/\($0)")))
                })
        }
        let server = try ["server.key", "server.pub"].map { ($0, try Data(contentsOf: keys.appendingPathComponent($0))) }
        let (secretKeys, publicKeys) = (try files(".key"), try files(".pub"))
        // Random, as production mode (the base's) needs them.
        func random() -> String {
            String((0..<40).map { _ in "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789".randomElement()! })
        }
        return [
            "ride-database": ["url": Data("postgres://ride:\(random())@db.internal:5432/ridesharing?sslmode=require".utf8)],
            "ride-token": ["token-secret": Data(random().utf8)],
            "ride-notifications": ["secret-key": Data(random().utf8)],
            "ride-gateway": ["secret-key": Data(random().utf8)],
            "ride-curve-server": Dictionary(uniqueKeysWithValues: server), "ride-curve-clients": secretKeys,
            "ride-curve-allowed": publicKeys,
        ]
    }

    /// What a container is started with as pod `ordinal` of its workload: the files of its Secret
    /// volumes are written under `root`, and every path into them is rewritten to point there.
    struct Launch {
        var arguments: [String]
        var environment: [String: String]
    }

    static func launch(
        _ container: Object, of workload: Workload, ordinal: Int, in objects: [Object], handMade: [String: [String: Data]], root: URL
    ) throws -> Launch {
        func secret(_ name: String) throws -> [String: Data] {
            if let object = named(objects, kind: "Secret").first(where: { Self.name($0) == name }) {
                return map(object["data"]).compactMapValues {
                    ($0 as? String).flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }
                }
                .merging(map(object["stringData"]).compactMapValues { ($0 as? String).map { Data($0.utf8) } }) { $1 }
            }
            guard let data = handMade[name] else {
                throw TestFailure("\(workload.name) uses the Secret \(name), which is neither rendered nor made by hand")
            }
            return data
        }
        func configMap(_ name: String) throws -> [String: String] {
            guard let object = named(objects, kind: "ConfigMap").first(where: { Self.name($0) == name }) else {
                throw TestFailure("no ConfigMap \(name)")
            }
            return map(object["data"]).mapValues { "\($0)" }
        }
        var environment: [String: String] = [:]
        for source in list(container["envFrom"]) {
            guard let name = map(source["configMapRef"])["name"] as? String else {
                throw TestFailure("\(workload.name): envFrom \(source)")
            }
            environment.merge(try configMap(name)) { $1 }
        }
        for variable in list(container["env"]) {
            let name = variable["name"] as? String ?? ""
            let from = map(variable["valueFrom"])
            if let value = variable["value"] as? String {
                // Kubernetes expands $(VAR) of the variables defined before it.
                let defined = environment
                environment[name] = value.replacing(/\$\((\w+)\)/) { match in defined[String(match.output.1)] ?? String(match.output.0) }
            } else if let key = map(from["secretKeyRef"])["key"] as? String, let secretName = map(from["secretKeyRef"])["name"] as? String {
                guard let data = try secret(secretName)[key] else {
                    throw TestFailure("\(workload.name): Secret \(secretName) has no \(key)")
                }
                environment[name] = String(decoding: data, as: UTF8.self)
            } else if let key = map(from["configMapKeyRef"])["key"] as? String,
                let mapName = map(from["configMapKeyRef"])["name"] as? String
            {
                environment[name] = try configMap(mapName)[key]
            } else if let field = map(from["fieldRef"])["fieldPath"] as? String {
                switch field {
                case "metadata.labels['apps.kubernetes.io/pod-index']": environment[name] = String(ordinal)
                case "metadata.name": environment[name] = workload.kind == "StatefulSet" ? "\(workload.name)-\(ordinal)" : workload.name
                default: throw TestFailure("\(workload.name): the test does not know the downward API's \(field)")
                }
            } else {
                throw TestFailure("\(workload.name): variable \(variable)")
            }
        }
        let volumes = Dictionary(list(workload.pod["volumes"]).map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
        var mounts: [String] = []
        for mount in list(container["volumeMounts"]) {
            let path = mount["mountPath"] as? String ?? ""
            let volume = volumes[mount["name"] as? String ?? ""] ?? [:]
            let target = root.appendingPathComponent(path)
            mounts.append(path)
            var sources = [map(volume["secret"])].filter { !$0.isEmpty }.map { ($0["secretName"] as? String ?? "", $0["items"]) }
            sources += list(map(volume["projected"])["sources"]).map { map($0["secret"]) }.map {
                ($0["name"] as? String ?? "", $0["items"])
            }
            guard !sources.isEmpty else {
                guard volume["emptyDir"] != nil else {
                    throw TestFailure("\(workload.name): volume \(mount) is neither a Secret nor an emptyDir")
                }
                try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                continue
            }
            var files: [String: Data] = [:]
            for (name, items) in sources {
                let data = try secret(name)
                let wanted =
                    (items as? [Object])?.map { ($0["key"] as? String ?? "", $0["path"] as? String ?? "") } ?? data.keys.map { ($0, $0) }
                for (key, file) in wanted {
                    guard let value = data[key] else { throw TestFailure("\(workload.name): Secret \(name) has no \(key)") }
                    files[file] = value
                }
            }
            if let subPath = mount["subPath"] as? String {
                guard let value = files[subPath] else { throw TestFailure("\(workload.name): no \(subPath) in volume \(mount)") }
                files = ["": value]
            }
            for (file, data) in files {
                let url = file.isEmpty ? target : target.appendingPathComponent(file)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: url)
            }
        }
        // A path into a mount, or a folder that holds mounts (RIDE_CURVE_KEYS of the bus: server.key, clients/).
        func local(_ value: String) -> String {
            mounts.contains { value.hasPrefix($0) || $0.hasPrefix(value + "/") } ? root.path + value : value
        }
        return Launch(arguments: command(container).dropFirst().map(local), environment: environment.mapValues(local))
    }
}
