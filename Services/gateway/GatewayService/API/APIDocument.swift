import Wire

/// `/openapi.json`, built from the routes as they are registered (`RouteRegistry`) and the wire
/// types' schemas (`@WireModel`): nothing in it is written twice.
enum APIDocument {
    static let description =
        "The HTTP and WebSocket API of the rider and driver apps (under /v1, bearer tokens from POST /v1/sessions), share links, "
        + "HyperTrack v3-compatible trip routes and the operator's dashboard (HTTP Basic: account id and secret key). "
        + "Errors are {\"error\":{\"code\",\"message\"}}: 400 the body is not JSON, 401 no or bad credentials, 403 not yours, "
        + "404 unknown, 405 a method the path does not answer, 409 the wrong status for this (the message names the current one), "
        + "422 a field is wrong (the message names it), 429 too many requests (try again after Retry-After seconds), 503 a service is down."

    static func build(_ entries: [RouteRegistry.Entry], version: String) -> JSONValue {
        var schemas = JSONSchemaWriter()
        let error = schemas.schema(ErrorBody.wireSchema)
        var paths: [String: JSONValue] = [:]
        for entry in entries {
            var item = paths[entry.path]?.objectValue ?? [:]
            item[entry.method.rawValue.lowercased()] = .object(operation(entry, error: error, schemas: &schemas))
            paths[entry.path] = .object(item)
        }
        return [
            "openapi": "3.1.0",
            "info": ["title": "Ridesharing gateway", "version": .string(version), "description": .string(description)],
            "servers": [["url": "/"]],
            "tags": .array(RouteDoc.Tag.allCases.map { ["name": .string($0.rawValue)] }),
            "paths": .object(paths),
            "components": [
                "schemas": .object(schemas.components),
                "securitySchemes": [
                    "bearer": ["type": "http", "scheme": "bearer", "description": "the token of POST /v1/sessions"],
                    "basic": [
                        "type": "http", "scheme": "basic", "description": "the account id and secret key (--account-id, --secret-key)",
                    ],
                    "operatorSession": [
                        "type": "apiKey", "in": "cookie", "name": .string(OperatorSessions.cookie),
                        "description": "the dashboard's session (POST /dashboard/session); a change also sends its X-CSRF-Token",
                    ],
                ],
            ],
        ]
    }

    static func operation(_ entry: RouteRegistry.Entry, error: JSONValue, schemas: inout JSONSchemaWriter) -> [String: JSONValue] {
        let doc = entry.doc
        var operation: [String: JSONValue] = [
            "operationId": .string(operationID(entry)), "summary": .string(doc.summary), "tags": [.string(doc.tag.rawValue)],
        ]
        operation["description"] = doc.description.map(JSONValue.string)
        if let op = doc.op { operation["x-op"] = .string(op) }
        if let rules = doc.fieldRules {
            operation["x-field-rules"] = .string(rules)
            operation["description"] = .string([doc.description, "Also: \(rules)."].compactMap { $0 }.joined(separator: " "))
        }
        var parameters: [JSONValue] = pathParameters(of: entry.path).map { name in
            [
                "name": .string(name), "in": "path", "required": true, "schema": ["type": "string", "minLength": 1],
                "description": .string(doc.pathDescriptions[name] ?? "the \(name)"),
            ]
        }
        for parameter in doc.query {
            var object: [String: JSONValue] = [
                "name": .string(parameter.name), "in": "query", "required": .bool(parameter.required),
                "schema": schemas.property(parameter.schema, rules: parameter.rules, description: nil),
            ]
            object["description"] = parameter.description.map(JSONValue.string)
            parameters.append(.object(object))
        }
        if doc.idempotent { parameters.append(IdempotencyKey.parameter) }
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
        if let body = doc.body {
            var schema = schemas.object(body)
            if doc.bodyNotEmpty { schema["minProperties"] = 1 }
            operation["requestBody"] = [
                "required": .bool(doc.bodyNotEmpty || body.contains(where: \.required)),
                "content": ["application/json": ["schema": .object(schema)]],
            ]
        }
        if doc.imageBody {
            let image: JSONValue = ["schema": ["type": "string", "contentMediaType": "application/octet-stream"]]
            operation["requestBody"] = ["required": true, "content": ["image/jpeg": image, "image/png": image]]
        }
        var responses: [String: JSONValue] = [:]
        for reply in doc.replies {
            responses[String(reply.status)] = response(reply, schemas: &schemas)
        }
        for status in errorStatuses(entry) {
            responses[String(status)] = [
                "description": .string(errorDescription(status)), "content": ["application/json": ["schema": error]],
            ]
        }
        operation["responses"] = .object(responses)
        switch entry.security {
        case .none: operation["security"] = []
        case .bearer: operation["security"] = [["bearer": []]]
        case .basic: operation["security"] = [["basic": []]]
        case .operator: operation["security"] = [["basic": []], ["operatorSession": []]]
        }
        return operation
    }

    static func response(_ reply: RouteDoc.Reply, schemas: inout JSONSchemaWriter) -> JSONValue {
        let schema: JSONValue
        let type: String
        switch reply.content {
        case .noBody: return ["description": .string(reply.description)]
        case .webSocket(let messages):
            // OpenAPI has no word for what a WebSocket then carries: an extension, each kind a schema.
            return [
                "description": .string(reply.description),
                "x-messages": ["oneOf": .array(messages.map { schemas.liveMessage($0) })],
            ]
        case .image:
            let image: JSONValue = ["schema": ["type": "string", "contentMediaType": "application/octet-stream"]]
            return ["description": .string(reply.description), "content": ["image/jpeg": image, "image/png": image]]
        case .text(let mediaType): (schema, type) = (["type": "string"], mediaType)
        case .json(let wire): (schema, type) = (schemas.schema(wire), "application/json")
        }
        return ["description": .string(reply.description), "content": [.init(type): ["schema": schema]]]
    }

    /// What the route's shape implies, and what its declaration adds.
    static func errorStatuses(_ entry: RouteRegistry.Entry) -> [Int] {
        var statuses = entry.doc.errors
        if entry.doc.body != nil { statuses.formUnion([400, 422]) }
        if entry.doc.imageBody { statuses.formUnion([413, 415, 422]) }
        if !entry.doc.query.isEmpty { statuses.insert(422) }
        if entry.security != .none { statuses.insert(401) }
        if entry.security == .bearer { statuses.insert(429) }
        // `CrossSiteRequestGuard`: an operator route's change sent by another site's page.
        if entry.security == .basic, !CrossSiteRequestGuard<GatewayContext>.safeMethods.contains(entry.method) { statuses.insert(403) }
        if !pathParameters(of: entry.path).isEmpty { statuses.insert(404) }
        if entry.doc.callsServices { statuses.insert(503) }
        if entry.doc.idempotent { statuses.formUnion([400, 409, 422]) }
        return statuses.sorted()
    }

    static func errorDescription(_ status: Int) -> String {
        switch status {
        case 400: "the body is not JSON"
        case 401: "no credentials, or wrong ones"
        case 403: "not the caller's to see or do"
        case 404: "no such thing (or not the caller's to know of)"
        case 409: "not in this state: the message names the current one"
        case 422: "a parameter is wrong: the message names it"
        case 413: "the body is larger than the route takes"
        case 415: "the body is not of a type the route takes (judged by its bytes)"
        case 426: "a WebSocket: connect with Upgrade: websocket"
        case 429: "too many requests or attempts: try again after Retry-After seconds"
        case 500: "the gateway is misconfigured: the message names the setting"
        case 503: "a service is down or busy; try again"
        default: "an error"
        }
    }

    /// `{id}` and `{place_id}` of `/v1/orders/{id}/places/{place_id}`.
    static func pathParameters(of path: String) -> [String] {
        path.split(separator: "/").filter { $0.hasPrefix("{") && $0.hasSuffix("}") }.map { String($0.dropFirst().dropLast()) }
    }

    /// `GET /v1/orders/{id}` → `get_v1_orders_id`.
    static func operationID(_ entry: RouteRegistry.Entry) -> String {
        let words = entry.path.split(separator: "/").map { $0.filter { $0.isLetter || $0.isNumber || $0 == "_" } }.filter { !$0.isEmpty }
        return ([entry.method.rawValue.lowercased()] + words).joined(separator: "_")
    }
}
