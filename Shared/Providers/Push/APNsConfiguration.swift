import Crypto

/// Where APNs is and who the platform is to it: `ride-notifications --apns-…`.
public struct APNsConfiguration: Sendable {
    public var key: P256.Signing.PrivateKey
    public var keyID: String
    public var teamID: String
    /// The app's bundle id.
    public var topic: String
    /// `https://api.push.apple.com` (or the sandbox's, or a stand-in's), without a trailing slash.
    public var url: String

    public init(key: P256.Signing.PrivateKey, keyID: String, teamID: String, topic: String, url: String) {
        (self.key, self.keyID, self.teamID, self.topic, self.url) = (key, keyID, teamID, topic, url)
    }
}
