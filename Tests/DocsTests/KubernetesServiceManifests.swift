import Bus
import Foundation
import Testing

/// The services that keep their state in the shared PostgreSQL database and scale by replicas
/// (users, orders, trips, notifications) are one Deployment, Service and PodDisruptionBudget each,
/// alike but for what is said here: `deploy/kubernetes/base/<service>.yaml` is made from one
/// template and the process table (`RideProcess`: the executable and its `--http` port). After
/// changing the template or a service's entry, `RIDE_WRITE_DOCS=1 swift test --filter
/// KubernetesServiceManifestTests` writes the files; the test fails while one differs.
struct KubernetesServiceManifest {
    /// A Secret mounted as files, and the settings naming those files.
    struct SecretFiles {
        /// Said above the variables: what the file is and why every replica needs it.
        var about: [String]
        var variables: [(name: String, about: String?, file: String)]
        var volume: String
        var secret: String
        var mountPath: String
        /// Said above the volume, if anything.
        var volumeAbout: String?
    }

    var process: RideProcess
    var about: String
    var cpuRequest: String
    var cpuLimit: String
    var secretFiles: SecretFiles?

    static let all = [
        KubernetesServiceManifest(
            process: .users,
            about: "Users: accounts and tokens; replicas share PostgreSQL and the token key (docs/operations.md, Running at scale).",
            cpuRequest: "100m", cpuLimit: "\"1\"",
            secretFiles: SecretFiles(
                about: [],
                variables: [
                    (
                        "RIDE_TOKEN_SECRET_FILE",
                        "The token signing key, a file of the Secret ride-token: every replica signs with the same key.", "token-secret"
                    ),
                    (
                        "RIDE_TOKEN_PREVIOUS_SECRET_FILE",
                        "The key being rotated in or out (docs/operations.md, Rotate keys); absent outside a rotation.",
                        "previous-token-secret"
                    ),
                ],
                volume: "token", secret: "ride-token", mountPath: "/etc/ride/token",
                volumeAbout: "Every key of ride-token as a file: token-secret, and previous-token-secret during a rotation.")),
        KubernetesServiceManifest(
            process: .orders,
            about:
                "Orders: dispatch, fares, payments; any number of replicas on PostgreSQL (the HorizontalPodAutoscaler in autoscaling.yaml sets how many).",
            cpuRequest: "200m", cpuLimit: "\"2\""),
        KubernetesServiceManifest(
            process: .trips, about: "Trips: routes, progress, arrivals; replicas share PostgreSQL.", cpuRequest: "100m", cpuLimit: "\"1\""),
        KubernetesServiceManifest(
            process: .notifications, about: "Notifications: inboxes, push, webhooks; replicas share PostgreSQL.", cpuRequest: "100m",
            cpuLimit: "\"1\"",
            secretFiles: SecretFiles(
                about: [
                    "The key that seals webhook secrets at rest, a file of the Secret ride-notifications:",
                    "every replica opens what another sealed.",
                ],
                variables: [("RIDE_NOTIFICATIONS_SECRET_FILE", nil, "secret-key")],
                volume: "key", secret: "ride-notifications", mountPath: "/etc/ride/notifications")),
    ]

    var path: String { "deploy/kubernetes/base/\(process.rawValue).yaml" }

    var text: String {
        let name = process.rawValue
        let port = process.httpPort
        var environment = ""
        var mounts = ""
        var volumes = ""
        if let files = secretFiles {
            environment += files.about.map { "            # \($0)\n" }.joined()
            for variable in files.variables {
                if let about = variable.about { environment += "            # \(about)\n" }
                environment += "            - name: \(variable.name)\n              value: \(files.mountPath)/\(variable.file)\n"
            }
            mounts = "            - name: \(files.volume)\n              mountPath: \(files.mountPath)\n              readOnly: true\n"
            volumes =
                (files.volumeAbout.map { "        # \($0)\n" } ?? "")
                + "        - name: \(files.volume)\n          secret:\n            secretName: \(files.secret)\n            defaultMode: 0440\n"
        }
        return """
            # \(about)
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: \(name)
              labels:
                app.kubernetes.io/name: \(name)
            spec:
              replicas: 2
              revisionHistoryLimit: 5
              strategy:
                type: RollingUpdate
                rollingUpdate:
                  maxUnavailable: 0
                  maxSurge: 1
              selector:
                matchLabels:
                  app.kubernetes.io/name: \(name)
              template:
                metadata:
                  labels:
                    app.kubernetes.io/name: \(name)
                  annotations:
                    prometheus.io/scrape: "true"
                    prometheus.io/port: "\(port)"
                spec:
                  securityContext:
                    runAsNonRoot: true
                    runAsUser: 1000
                    runAsGroup: 1000
                    fsGroup: 1000
                    seccompProfile:
                      type: RuntimeDefault
                  terminationGracePeriodSeconds: 30
                  containers:
                    - name: \(name)
                      image: ridesharing:dev
                      command: ["\(process.executable)", "--http", "\(process.httpDefault)"]
                      envFrom:
                        - configMapRef:
                            name: ride-settings
                      env:
                        - name: RIDE_DATABASE_URL
                          valueFrom:
                            secretKeyRef:
                              name: ride-database
                              key: url

            """ + environment + """
                          ports:
                            - name: http
                              containerPort: \(port)
                          startupProbe:
                            httpGet:
                              path: /livez
                              port: http
                            periodSeconds: 2
                            failureThreshold: 30
                          livenessProbe:
                            httpGet:
                              path: /livez
                              port: http
                            periodSeconds: 10
                            failureThreshold: 3
                          readinessProbe:
                            httpGet:
                              path: /readyz
                              port: http
                            periodSeconds: 5
                            failureThreshold: 2
                          resources:
                            requests:
                              cpu: \(cpuRequest)
                              memory: 128Mi
                            limits:
                              cpu: \(cpuLimit)
                              memory: 512Mi
                          securityContext:
                            allowPrivilegeEscalation: false
                            readOnlyRootFilesystem: true
                            capabilities:
                              drop: [ALL]
                          volumeMounts:
                            - name: curve-keys
                              mountPath: /etc/ride/curve
                              readOnly: true

                """ + mounts + """
                                - name: data
                                  mountPath: /var/lib/ride
                                - name: tmp
                                  mountPath: /tmp
                          volumes:
                            # Its own CURVE key and the servers' public key (docs/operations.md, Securing the bus).
                            - name: curve-keys
                              projected:
                                defaultMode: 0440
                                sources:
                                  - secret:
                                      name: ride-curve-server
                                      items:
                                        - key: server.pub
                                          path: server.pub
                                  - secret:
                                      name: ride-curve-clients
                                      items:
                                        - key: \(name).key
                                          path: clients/\(name).key

                    """ + volumes + """
                            - name: data
                              emptyDir: {}
                            - name: tmp
                              emptyDir:
                                medium: Memory
                                sizeLimit: 16Mi
                    ---
                    apiVersion: v1
                    kind: Service
                    metadata:
                      name: \(name)
                      labels:
                        app.kubernetes.io/name: \(name)
                    spec:
                      selector:
                        app.kubernetes.io/name: \(name)
                      ports:
                        - name: http
                          port: \(port)
                          targetPort: http
                    ---
                    # A node drain takes one replica at a time.
                    apiVersion: policy/v1
                    kind: PodDisruptionBudget
                    metadata:
                      name: \(name)
                    spec:
                      maxUnavailable: 1
                      selector:
                        matchLabels:
                          app.kubernetes.io/name: \(name)

                    """
    }
}

@Suite struct KubernetesServiceManifestTests {
    @Test(arguments: KubernetesServiceManifest.all.map(\.process)) func theManifestIsTheTemplatesForItsProcess(_ process: RideProcess)
        throws
    {
        let manifest = try #require(KubernetesServiceManifest.all.first { $0.process == process })
        let file = Repository.root.appendingPathComponent(manifest.path)
        if ProcessInfo.processInfo.environment["RIDE_WRITE_DOCS"] != nil {
            try manifest.text.write(to: file, atomically: true, encoding: .utf8)
        }
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(
            written == manifest.text,
            "\(manifest.path) is not what KubernetesServiceManifest makes: RIDE_WRITE_DOCS=1 swift test --filter KubernetesServiceManifestTests"
        )
    }
}
