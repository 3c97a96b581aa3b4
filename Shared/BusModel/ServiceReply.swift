import Wire

/// A reply body: a status (`200`, `404`, ...) and its JSON. The bus carries it as one frame,
/// `<status>\n<JSON>` with the status as three ASCII digits (`ServiceReply.frames`).
public struct ServiceReply: Equatable, Sendable {
    public var status: Int
    public var json: [UInt8]

    public init(status: Int, json: [UInt8]) {
        self.status = status
        self.json = json
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    public static func error(status: Int, code: String, message: String) -> ServiceReply {
        // Encoding two strings cannot fail; fall back to a fixed text rather than trap if it ever did.
        let json =
            (try? JSONCoding.encode(ErrorBody(code: code, message: message)))
            ?? Array(#"{"error":{"code":"internal","message":"unencodable error"}}"#.utf8)
        return ServiceReply(status: status, json: json)
    }

    public static func error(_ error: ServiceError) -> ServiceReply {
        .error(status: error.status, code: error.code, message: error.message)
    }

    /// The error this reply carries, when it is not a success.
    public var serviceError: ServiceError? {
        guard !isSuccess else { return nil }
        if let body = try? JSONCoding.decode(ErrorBody.self, from: json) {
            return ServiceError(status: status, code: body.error.code, message: body.error.message)
        }
        return ServiceError(status: status, code: "error", message: String(decoding: json, as: UTF8.self))
    }
}
