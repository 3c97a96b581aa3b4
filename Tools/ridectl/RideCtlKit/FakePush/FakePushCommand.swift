import ArgumentParser
import Foundation
import NIOSSL
import Providers
import ServiceKit
import SettingsKit

/// `ridectl fake-push`: a local stand-in for APNs and FCM, for tests and runs without phones.
struct FakePushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-push",
        abstract:
            "A local stand-in for Apple's push service (APNs) and Firebase Cloud Messaging (HTTP v1, with Google's OAuth token endpoint).",
        discussion: """
            One HTTPS server (HTTP/2 by ALPN, as APNs requires) with the services' wire formats: POST \
            /3/device/<token> checks the provider token (ES256 JWT of the --apns-key-file key, its kid \
            and team, made within the hour) and apns-topic; POST /token sells an access token for an \
            RS256 assertion of the service account's key; POST /v1/projects/<project>/messages:send \
            takes a message with one. Errors are the services' own (APNs {"reason"}, Google's \
            {"error": {…, "details": [FcmError]}}). GET /fake/pushes lists every push and its answer; \
            POST /fake/tokens/<token> {"answer": "unregistered"|"bad_token"|"throttled"|"unavailable", \
            "times": n} sets what a token gets next. The same variables as ride-notifications' flags \
            configure it; its token_uri is where the service account file says, so point that file at \
            https://<--listen>/token.

            Example (then ride-notifications with the same APNs and FCM settings, --apns-url and \
            --fcm-url https://127.0.0.1:12112 and --push-ca-file cert.pem):
              ridectl fake-push --listen 127.0.0.1:12112 --tls-cert-file cert.pem --tls-key-file key.pem \\
                --apns-key-file AuthKey.p8 --apns-key-id KEY1234567 --apns-team-id TEAM123456 --apns-topic com.example.rider \\
                --fcm-service-account-file service-account.json
            """)

    enum Keys {
        static let listen = SettingKey(
            "listen", env: "RIDE_FAKE_PUSH_LISTEN", default: "127.0.0.1:12112", "Address to listen on (HOST:PORT; port 0 picks a free one)")
        static let tlsCertFile = SettingKey("tls-cert-file", env: "RIDE_FAKE_PUSH_TLS_CERT_FILE", "The server's certificate chain (PEM)")
        static let tlsKeyFile = SettingKey("tls-key-file", env: "RIDE_FAKE_PUSH_TLS_KEY_FILE", "The server's private key (PEM)")
    }
    @Option(name: Keys.listen.name, help: Keys.listen.help) var listen: String?
    @Option(name: Keys.tlsCertFile.name, help: Keys.tlsCertFile.help) var tlsCertFile: String?
    @Option(name: Keys.tlsKeyFile.name, help: Keys.tlsKeyFile.help) var tlsKeyFile: String?

    @OptionGroup var push: PushOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let address = try withValidation {
            try HostPort.parse(Keys.listen.resolve(listen, environment: environment), name: "--listen")
        }
        let settings = try withValidation { try push.settings(environment: environment) }
        guard settings.apns != nil || settings.fcm != nil else {
            throw ValidationError(
                "give the APNs settings (--apns-key-file, --apns-key-id, --apns-team-id, --apns-topic), --fcm-service-account-file, or both"
            )
        }
        let tls = try withValidation { () throws -> TLSConfiguration in
            let cert = Keys.tlsCertFile.resolve(tlsCertFile, environment: environment).value
            let key = Keys.tlsKeyFile.resolve(tlsKeyFile, environment: environment).value
            guard !cert.isEmpty, !key.isEmpty else {
                throw ConfigurationError("--tls-cert-file and --tls-key-file are required: APNs is HTTPS only")
            }
            do {
                return TLSConfiguration.makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(cert).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            } catch {
                throw ConfigurationError("--tls-cert-file \(cert), --tls-key-file \(key): \(error)")
            }
        }
        let state = FakePushState()
        let apns = settings.apns.map {
            FakeAPNs(publicKey: $0.key.publicKey, keyID: $0.keyID, teamID: $0.teamID, topic: $0.topic, state: state)
        }
        let fcm = settings.fcm.map {
            FakeFCM(publicKey: $0.key.publicKey, clientEmail: $0.clientEmail, projectID: $0.projectID, tokenURI: $0.tokenURI, state: state)
        }
        let server = FakePushServer(apns: apns, fcm: fcm, state: state, logger: CLILogging.logger)
        let app = try server.application(host: address.host, port: address.port, tls: tls) { port in
            Output.out(
                "ridectl fake-push: \([apns.map { _ in "APNs" }, fcm.map { _ in "FCM" }].compactMap { $0 }.joined(separator: " and ")) on https://\(address.host):\(port)\n"
            )
        }
        try await app.runService()
    }
}
