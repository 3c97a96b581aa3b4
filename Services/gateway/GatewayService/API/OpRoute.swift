import Bus
import Foundation
import HTTPTypes
import Hummingbird
import Wire

/// A route that is one op and nothing more: its params are gathered from the path, the query, the
/// body and who is asking, as declared here; the op's reply is the response. The same declaration
/// gives the route's entry in the API document (its parameters and body are the op's params,
/// with their types and limits, less what the gateway fills in).
struct OpRoute<Params: Codable & Sendable, Reply: Sendable>: Sendable {
    /// A param the gateway sets from the bearer token, whatever the request says.
    enum Filled: Sendable {
        /// `{"id", "role"}` of the caller.
        case caller
        /// The caller's user id.
        case userID
        /// The session the caller's token names (an op that asks how recent its log-in was).
        case sessionID
    }

    /// Which params come from the body.
    enum Body: Sendable {
        case none
        /// Every param not filled in or taken from the path or query.
        case rest
        case only([String])
    }

    let op: Op<Params, Reply>
    let tag: RouteDoc.Tag
    let summary: String
    let statuses: [Int]
    let fill: [String: Filled]
    /// Path parameter → params key.
    let path: [String: String]
    let body: Body
    /// The body must change something (`PATCH`): 422 for `{}`.
    let nonEmptyBody: Bool
    let errors: Set<Int>
    let description: String?
    /// See `RouteDoc.fieldRules`.
    let fieldRules: String?
    /// The params' members, read once from the params type's schema.
    let members: [WireProperty]
    /// The params the body carries.
    let bodyKeys: [String]
    /// The params read from the query string, by their last component (`near.radius` is
    /// `?radius=`): each one's key path and parameter.
    let query: [(keys: [String], parameter: RouteDoc.Parameter)]

    init(
        _ op: Op<Params, Reply>, tag: RouteDoc.Tag, summary: String? = nil, statuses: [Int] = [200],
        fill: [String: Filled] = ["caller": .caller],
        path: [String: String] = [:], query: [String] = [], body: Body = .none, nonEmptyBody: Bool = false, errors: Set<Int> = [],
        description: String? = nil, fieldRules: String? = nil
    ) {
        self.op = op
        self.tag = tag
        self.summary = summary ?? (op.summary.prefix(1).uppercased() + op.summary.dropFirst())
        self.statuses = statuses
        self.fill = fill
        self.path = path
        self.body = body
        self.nonEmptyBody = nonEmptyBody
        self.errors = errors
        self.description = description
        self.fieldRules = fieldRules
        let members = (Params.self as? any WireValue.Type)?.wireSchema.members ?? []
        self.members = members
        self.query = query.compactMap { key in Self.parameter(key, in: members).map { (key.split(separator: ".").map(String.init), $0) } }
        switch body {
        case .none: bodyKeys = []
        case .only(let keys): bodyKeys = keys
        case .rest:
            let taken = Set(fill.keys).union(path.values).union(query.map { String($0.split(separator: ".")[0]) })
            bodyKeys = members.map(\.key).filter { !taken.contains($0) }
        }
    }

    var routeDoc: RouteDoc {
        let replySchema = (Reply.self as? any WireValue.Type)?.wireSchema ?? .any
        var doc = RouteDoc(
            summary, tag: tag, description: description,
            body: { if case .none = body { nil } else { members.filter { bodyKeys.contains($0.key) } } }(),
            query: query.map(\.parameter),
            path: Dictionary(
                uniqueKeysWithValues: path.map { name, key in (name, members.first { $0.key == key }?.description ?? "the \(key)") }),
            replies: statuses.map {
                .init(
                    status: $0, description: $0 == 201 ? "created" : "the \(OpDescriptor.typeName(Reply.self))", content: .json(replySchema)
                )
            },
            errors: errors)
        doc.bodyNotEmpty = nonEmptyBody
        doc.fieldRules = fieldRules
        doc.op = op.fullName
        return doc
    }

    /// The query parameter for `key` (dotted: a member's member).
    static func parameter(_ key: String, in members: [WireProperty]) -> RouteDoc.Parameter? {
        let parts = key.split(separator: ".").map(String.init)
        var members = members
        for part in parts.dropLast() {
            guard let parent = members.first(where: { $0.key == part }) else { return nil }
            members = parent.schema.members
        }
        guard let property = members.first(where: { $0.key == parts.last }) else { return nil }
        return .init(
            name: parts.last ?? key, schema: property.schema, rules: property.rules, required: property.required && parts.count == 1,
            description: property.description)
    }

    /// The op's params from this request; `requestID` (an `Idempotency-Key`) as `request_id`.
    func params(_ request: Request, _ context: GatewayContext, requestID: String? = nil) async throws -> JSONValue {
        var params: [String: JSONValue] = [:]
        if case .none = body {
        } else {
            let sent = try await RequestJSON.object(request, context: context)
            if nonEmptyBody, sent.isEmpty {
                throw GatewayError(
                    .unprocessableContent, "invalid_params", "(body): nothing to change; give \(bodyKeys.joined(separator: ", "))")
            }
            if case .rest = body {
                // All of it, less what the gateway fills in: members the op does not know are the
                // service's to refuse or ignore.
                params = sent.filter { !fill.keys.contains($0.key) && !path.values.contains($0.key) }
            } else {
                for key in bodyKeys { params[key] = sent[key] }
            }
        }
        for (keys, parameter) in query {
            guard let text = request.uri.queryParameters.get(parameter.name) else { continue }
            params.set(keys, to: try parameter.value(text))
        }
        for (name, key) in path { params[key] = .string(try context.parameters.require(name)) }
        for (key, filled) in fill {
            switch filled {
            case .caller: params[key] = try context.caller()
            case .userID: params[key] = .string(try context.requireUser().id)
            case .sessionID: params[key] = BearerAuthentication.sessionID(in: request).map(JSONValue.string)
            }
        }
        params[RequestKey.member] = requestID.map(JSONValue.string)
        params[RequestKey.hashMember] = nil  // the gateway's to say, never a body's
        return .object(params)
    }
}

extension [String: JSONValue] {
    /// Sets the member at a path of keys, making the objects on the way.
    fileprivate mutating func set(_ path: [String], to value: JSONValue) {
        guard let first = path.first else { return }
        if path.count == 1 {
            self[first] = value
            return
        }
        var inner = self[first]?.objectValue ?? [:]
        inner.set(Array(path.dropFirst()), to: value)
        self[first] = .object(inner)
    }
}

extension RecordedRoutes {
    /// Registers a route that is one op (see `OpRoute`).
    /// Every POST, PUT, PATCH and DELETE takes an `Idempotency-Key` (see `IdempotencyKey`).
    /// `admit` sees the params before the op is sent and may refuse them (a rate limit).
    func on<Params, Reply>(
        _ method: HTTPRequest.Method, _ path: String, _ route: OpRoute<Params, Reply>, calling platform: PlatformCalls,
        admit: (@Sendable (JSONValue, Request, GatewayContext) throws -> Void)? = nil
    ) {
        let keyed = IdempotencyKey.methods.contains(method)
        on(method, path, route.routeDoc) { request, context in
            let key = try keyed ? IdempotencyKey.from(request) : nil
            let params = try await route.params(request, context, requestID: key)
            try admit?(params, request, context)
            return try await platform.forward(route.op, body: params)
        }
    }
}

/// The `Idempotency-Key` header: the same key with the same request answers the first reply
/// (status and body), with another request 422 `idempotency_key_reused`; kept 24 hours. The
/// gateway checks it and passes it as the op's `request_id`; the service remembers it with its
/// own data, scoped by the caller (docs/design.md, "Reliability model").
enum IdempotencyKey {
    static let name = HTTPField.Name("Idempotency-Key")!
    static let methods: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]

    /// The request's key; nil without one; 400 `invalid_idempotency_key` when it is not 1 to 255 visible ASCII characters.
    static func from(_ request: Request) throws -> String? {
        guard let key = request.headers[name] else { return nil }
        guard RequestKey.isValid(key) else {
            throw GatewayError(
                .badRequest, "invalid_idempotency_key",
                "Idempotency-Key: must be 1 to 255 visible ASCII characters (no spaces), got \(key.utf8.count) bytes")
        }
        return key
    }

    /// Gives `params` (an op's, made from a request's body) the request's key as `request_id`, or
    /// none, and drops whatever `request_id` or `request_hash` the body carried. With `standingFor`,
    /// the request is that (its method, path and body) rather than the params: for params the
    /// gateway adds values of the moment to (a batch id, a time), which a retry would change.
    static func stamp(_ params: inout [String: JSONValue], from request: Request, standingFor body: [String: JSONValue]? = nil) throws {
        let key = try from(request)
        params[RequestKey.member] = key.map(JSONValue.string)
        params[RequestKey.hashMember] =
            key == nil ? nil : body.map { .string(RequestKey.hash(op: "\(request.method) \(request.uri.path)", params: $0)) }
    }

    /// The header in the API document.
    static let parameter: JSONValue = [
        "name": "Idempotency-Key", "in": "header", "required": false,
        "schema": ["type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"],
        "description": .string(
            "Makes a retry safe: the same key with the same request answers the first reply (status and body) without doing it again; "
                + "with another request 422 idempotency_key_reused; while the first is still answered 409 request_in_progress. "
                + "Kept 24 hours, per caller."),
    ]
}
