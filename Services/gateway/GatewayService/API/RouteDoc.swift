import Hummingbird
import Wire

/// What the API document (`/openapi.json`) says of one route, given where the route is
/// registered: the document is built from these, so it cannot list a route the gateway does not
/// serve or describe one differently from how it is registered.
struct RouteDoc: Sendable {
    /// The document's groups of routes.
    enum Tag: String, Sendable, CaseIterable {
        case accounts, drivers, orders, rides, notifications, places
        case shareLinks = "share links"
        case hyperTrack = "hypertrack"
        case operators, meta
        case apps = "web apps"
    }

    /// A success the route answers with: its status and what its body is.
    struct Reply: Sendable {
        var status: Int
        var description: String
        var content: Content
    }

    /// A response body.
    enum Content: Sendable {
        case json(WireSchema)
        /// A text file of this media type (a page, the web apps' scripts and stylesheet).
        case text(String)
        /// A WebSocket after `101 Switching Protocols`, and the kinds of message it sends.
        case webSocket([LiveKindDescriptor])
        /// A JPEG or PNG's bytes.
        case image
        /// No body (`304 Not Modified`).
        case noBody

        static var html: Content { .text("text/html") }
    }

    /// A query or path parameter.
    struct Parameter: Sendable {
        var name: String
        var schema: WireSchema
        var rules: WireRules
        var required: Bool
        var description: String?
    }

    var summary: String
    var tag: Tag
    var description: String?
    /// The request body's members; nil: the route reads no body.
    var body: [WireProperty]?
    /// The request body is an image's bytes (JPEG or PNG), not JSON.
    var imageBody = false
    /// The body must have one of its members (`minProperties`).
    var bodyNotEmpty = false
    var query: [Parameter] = []
    /// Descriptions of the path's `{parameters}` (each is a non-empty string).
    var pathDescriptions: [String: String] = [:]
    var replies: [Reply]
    /// Error statuses the route answers besides those its shape implies (400 and 422 with a body
    /// or query, 401 with credentials, 404 with a path parameter, 503 when a service is down).
    var errors: Set<Int> = []
    /// Whether it asks a service (and so may answer 503).
    var callsServices: Bool
    /// Rules between fields that JSON Schema does not state (a 422 names the field): in the
    /// document as the operation's `x-field-rules`, so API tests know a schema-valid request may
    /// still be refused.
    var fieldRules: String?
    /// The op the route is (`orders.accept`), when it is one.
    var op: String?
    /// The route takes an `Idempotency-Key` header (400 malformed, 409 still running, 422 reused).
    var idempotent = false

    init(
        _ summary: String, tag: Tag, description: String? = nil, body: [WireProperty]? = nil, query: [Parameter] = [],
        path: [String: String] = [:], replies: [Reply], errors: Set<Int> = [], callsServices: Bool = true, fieldRules: String? = nil,
        op: String? = nil
    ) {
        self.summary = summary
        self.tag = tag
        self.description = description
        self.body = body
        self.query = query
        self.pathDescriptions = path
        self.replies = replies
        self.errors = errors
        self.callsServices = callsServices
        self.fieldRules = fieldRules
        self.op = op
    }

    /// A route answering `type` as JSON with 200 (or `status`).
    init<Reply: WireValue>(
        _ summary: String, tag: Tag, description: String? = nil, body: [WireProperty]? = nil, query: [Parameter] = [],
        path: [String: String] = [:], reply: Reply.Type, status: Int = 200, _ replyDescription: String, errors: Set<Int> = [],
        fieldRules: String? = nil,
        op: String? = nil
    ) {
        self.init(
            summary, tag: tag, description: description, body: body, query: query, path: path,
            replies: [.init(status: status, description: replyDescription, content: .json(Reply.wireSchema))], errors: errors,
            fieldRules: fieldRules,
            op: op)
    }
}

extension WireSchema {
    /// The members of a model (empty for any other schema).
    var members: [WireProperty] {
        if case .model(let model) = self { return model.properties }
        return []
    }
}

extension RouteDoc.Parameter {
    /// A query string's value as the parameter's type: 422 naming it when it is not one.
    func value(_ text: String) throws -> JSONValue {
        switch schema {
        case .integer, .number:
            guard let value = Double(text), value.isFinite, schema.isNumber || value.rounded() == value else {
                throw GatewayError(.unprocessableContent, "invalid_params", "\(name): expected a number, got '\(text.prefix(40))'")
            }
            return .number(value)
        case .boolean:
            guard let value = Bool(text) else {
                throw GatewayError(.unprocessableContent, "invalid_params", "\(name): expected true or false, got '\(text.prefix(40))'")
            }
            return .bool(value)
        default:
            return .string(text)
        }
    }

    /// The parameter in `request`'s query, read and checked against its rules; nil when absent.
    func read(from request: Request) throws -> JSONValue? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        let value = try value(text)
        do throws(WireViolation) {
            switch value {
            case .number(let number):
                try rules.check(number: number, at: name)
                if case .integer = schema { try WireRules.checkSafeInteger(number, at: name) }
            case .string(let string): try rules.check(string: string, at: name)
            default: break
            }
        } catch {
            throw GatewayError(.unprocessableContent, "invalid_params", error.description)
        }
        return value
    }
}

extension RouteDoc {
    /// Checks the query parameters this route documents (for routes whose handler reads none).
    func checkQuery(of request: Request) throws {
        for parameter in query { _ = try parameter.read(from: request) }
    }
}

extension WireSchema {
    fileprivate var isNumber: Bool {
        if case .number = self { return true }
        return false
    }
}
