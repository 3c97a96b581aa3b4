import Foundation
import Wire

/// What the fake push services remember: every request (for `GET /fake/pushes`), the answers set
/// for tokens (`POST /fake/tokens/<token>`), and the FCM access tokens it sold.
actor FakePushState {
    /// An answer a token gets instead of a delivery, `times` more times (nil: every time).
    struct Answer: Sendable {
        var kind: String
        var times: Int?
    }

    static let answerKinds = ["unregistered", "bad_token", "throttled", "unavailable"]

    private(set) var requests: [JSONValue] = []
    private var answers: [String: Answer] = [:]
    private var accessTokens: [String: Date] = [:]

    func record(_ request: JSONValue) { requests.append(request) }

    func setAnswer(_ answer: Answer?, for token: String) { answers[token] = answer }

    /// The answer `token` gets now (one of its `times` used up), or nil: delivered.
    func takeAnswer(for token: String) -> String? {
        guard var answer = answers[token] else { return nil }
        if let times = answer.times {
            answer.times = times - 1
            answers[token] = times > 1 ? answer : nil
        }
        return answer.kind
    }

    func sellAccessToken(lifetime: TimeInterval) -> String {
        let token = "ya29.fake-" + UUID().uuidString.lowercased()
        accessTokens[token] = Date().addingTimeInterval(lifetime)
        return token
    }

    func accessTokenIsValid(_ token: String) -> Bool { (accessTokens[token] ?? .distantPast) > Date() }
}

/// A compact JWS taken apart, as the services read their credentials.
struct FakeJWS {
    var header: JSONValue
    var claims: JSONValue
    var signingInput: String
    var signature: Data

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.decode(parts[0]), let claims = Self.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { return nil }
        (self.header, self.claims, self.signingInput, self.signature) = (header, claims, parts[0] + "." + parts[1], signature)
    }

    static func decode(_ part: Substring) -> JSONValue? {
        Base64URL.decode(part).flatMap { try? JSONCoding.decode(JSONValue.self, from: Array($0)) }
    }
}
