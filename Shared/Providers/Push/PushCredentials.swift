import Crypto
import Foundation
import RideModels
import Wire
import _CryptoExtras

/// A Google service account's key file, as the Firebase console downloads it: what FCM's access
/// tokens are bought with.
public struct FCMServiceAccount: Sendable {
    public var projectID: String
    public var clientEmail: String
    public var privateKeyID: String
    public var key: _RSA.Signing.PrivateKey
    public var tokenURI: String

    /// The file at `path`, checked: JSON of `"type": "service_account"` with a project, an email, an
    /// RSA key in PEM and an http(s) `token_uri`. Each problem is named.
    public static func load(path: String) throws -> FCMServiceAccount {
        guard let data = FileManager.default.contents(atPath: path) else { throw PushCredentialError(description: "cannot read \(path)") }
        guard data.count <= 64 * 1024, let json = try? JSONCoding.decode(JSONValue.self, from: Array(data)), json.objectValue != nil else {
            throw PushCredentialError(description: "\(path) is not a service account's JSON key file")
        }
        func field(_ name: String) throws -> String {
            guard let value = json[name]?.stringValue, !value.isEmpty else {
                throw PushCredentialError(description: "\(path): \(name) is missing")
            }
            return value
        }
        guard json["type"]?.stringValue == "service_account" else {
            throw PushCredentialError(description: "\(path): type is not service_account")
        }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key"))
        } catch let error as PushCredentialError {
            throw error
        } catch {
            throw PushCredentialError(description: "\(path): private_key is not an RSA private key in PEM (\(error))")
        }
        let tokenURI = try field("token_uri")
        guard let url = URL(string: tokenURI), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw PushCredentialError(description: "\(path): token_uri '\(tokenURI.prefix(100))' is not an http(s) URL")
        }
        let projectID = try field("project_id")
        guard projectID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw PushCredentialError(description: "\(path): project_id '\(projectID.prefix(100))' is not a project id")
        }
        return FCMServiceAccount(
            projectID: projectID, clientEmail: try field("client_email"), privateKeyID: try field("private_key_id"), key: key,
            tokenURI: tokenURI)
    }
}

extension APNsConfiguration {
    /// The team's `.p8` key (a P-256 key in PKCS #8 PEM, as Apple's developer site gives it), checked.
    public static func key(path: String) throws -> P256.Signing.PrivateKey {
        guard let data = FileManager.default.contents(atPath: path) else { throw PushCredentialError(description: "cannot read \(path)") }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        } catch {
            throw PushCredentialError(description: "\(path) is not an APNs key (a P-256 private key in PEM, the .p8 file): \(error)")
        }
    }
}

/// Which tokens a push service takes, checked when a phone registers one (a token the service
/// would refuse is refused here, naming why, and nothing is kept).
public enum PushTokenRules {
    public static func problem(with token: String, platform: PushPlatform) -> String? {
        switch platform {
        case .apns:
            // A device token is bytes shown as hex: 32 today, longer allowed (Apple says not to assume a length).
            guard token.utf8.count.isMultiple(of: 2), (64...200).contains(token.utf8.count),
                token.utf8.allSatisfy({ hexDigits.contains($0) })
            else {
                return "token: an APNs device token is 64 to 200 hexadecimal digits"
            }
        case .fcm:
            guard (32...4096).contains(token.utf8.count), token.utf8.allSatisfy({ fcmCharacters.contains($0) }) else {
                return "token: an FCM registration token is 32 to 4096 characters of letters, digits, '-', '_', ':' and '.'"
            }
        }
        return nil
    }

    static let hexDigits = Set(Array("0123456789abcdefABCDEF".utf8))
    static let fcmCharacters = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:.".utf8))
}

/// A push credential that cannot be used, and why.
public struct PushCredentialError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}
