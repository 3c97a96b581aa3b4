import AsyncHTTPClient
import Foundation
import NIOSSL
import Prometheus
import Providers
import ServiceKit
import SettingsKit

/// The one pooled HTTP client both push services are reached through (HTTP/2 where the service
/// offers it, as APNs requires), and the providers made of the settings.
enum PushClient {
    static func make(_ settings: PushSettings) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = settings.caFile {
            do {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            } catch {
                throw ConfigurationError("--push-ca-file: \(caFile): \(error)")
            }
        }
        let timeout = Int64(settings.timeout / .nanoseconds(1))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .nanoseconds(timeout), read: .nanoseconds(timeout))
        configuration.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    static func providers(_ settings: PushSettings, client: HTTPClient, file: any PushProvider) -> PushProviders {
        PushProviders(
            apns: settings.apns.map { APNsPushProvider(configuration: $0, client: client, timeout: settings.timeout) },
            fcm: settings.fcm.map { FCMPushProvider(account: $0, url: settings.fcmURL, client: client, timeout: settings.timeout) },
            file: file)
    }
}

/// `ride_notifications_pushes_total`, one counter per platform and outcome, made up front.
struct PushCounters: Sendable {
    let counters: [String: Prometheus.Counter]

    init(metrics: ServiceMetrics) {
        var counters: [String: Prometheus.Counter] = [:]
        for platform in ["apns", "fcm", "file"] {
            for outcome in ["sent", "retry", "dead_token", "failed"] {
                counters[platform + "/" + outcome] = metrics.counter(
                    RideMetric.pushes, labels: [("platform", platform), ("outcome", outcome)])
            }
        }
        self.counters = counters
    }

    var count: @Sendable (String, String) -> Void {
        { [counters] platform, outcome in counters[platform + "/" + outcome]?.increment() }
    }
}
