import HTTPTypes

/// Why a provider's token is refused: a 401 whose code is `token_expired` or `token_invalid` and
/// whose message names the check that failed (`reason`, also what the rejection log records).
struct IdentityRejection: Error, Equatable, CustomStringConvertible {
    enum Reason: String, Sendable {
        case malformed
        case unsupportedAlgorithm = "unsupported_algorithm"
        case unknownKey = "unknown_key"
        case badSignature = "bad_signature"
        case wrongIssuer = "wrong_issuer"
        case wrongAudience = "wrong_audience"
        case expired
        case notYetValid = "not_yet_valid"
        case nonceMismatch = "nonce_mismatch"
        /// Facebook's `debug_token` says the token is not valid.
        case notValid = "not_valid"
    }

    let reason: Reason
    let detail: String

    init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    var code: String { reason == .expired ? "token_expired" : "token_invalid" }
    var description: String { "\(reason.rawValue): \(detail)" }

    var gatewayError: GatewayError {
        GatewayError(
            .unauthorized, code, "the provider's token is refused (\(description))",
            headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
    }
}

/// What a verified token says: the provider's stable id of the person, and what it tells of them.
struct VerifiedIdentity: Sendable, Equatable {
    var subject: String
    var name: String?
    var email: String?
}
