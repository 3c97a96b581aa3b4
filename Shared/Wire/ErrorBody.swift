/// The JSON form of an error, on the bus and over HTTP: `{"error":{"code":…,"message":…}}`.
@WireModel
public struct ErrorBody: Codable, Equatable, Sendable {
    @WireModel
    public struct Detail: Codable, Equatable, Sendable {
        /// A stable, machine-readable snake_case code, e.g. `not_found`.
        public var code: String
        /// What is wrong, for a person.
        public var message: String
    }
    public var error: Detail

    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}
