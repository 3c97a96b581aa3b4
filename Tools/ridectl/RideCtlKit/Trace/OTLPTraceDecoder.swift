import Foundation
import Wire

/// Reads an OTLP/HTTP JSON export request (`ExportTraceServiceRequest`:
/// resourceSpans → scopeSpans → spans) into `Span`s.
///
/// It follows the OTLP JSON encoding (ids as hex, 64-bit times as decimal strings, enums as
/// integers, lowerCamelCase keys) and also takes what protobuf's JSON mapping allows besides:
/// snake_case keys, times as numbers, enums by name, ids in base64. Anything else is refused with
/// the path of what is wrong; a request is taken whole or not at all.
public enum OTLPTraceDecoder {
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    public static func decode(_ body: [UInt8]) throws(Problem) -> [Span] {
        let root: JSONValue
        do {
            root = try JSONCoding.decode(JSONValue.self, from: body)
        } catch {
            throw Problem("the body is not JSON: \(JSONCoding.describe(error))")
        }
        guard let object = root.objectValue else { throw Problem("the body must be a JSON object (an OTLP ExportTraceServiceRequest)") }
        guard let resources = field(object, "resourceSpans") else {
            throw Problem("resourceSpans: missing (is this an OTLP JSON trace export, POSTed to /v1/traces?)")
        }
        var spans: [Span] = []
        for (r, resourceSpans) in try array(resources, "resourceSpans").enumerated() {
            let path = "resourceSpans[\(r)]"
            let resourceObject = try objectOf(resourceSpans, path)
            var resource: [String: JSONValue] = [:]
            if let value = field(resourceObject, "resource") { resource = try objectOf(value, path + ".resource") }
            let resourceAttributes = try attributes(field(resource, "attributes"), path + ".resource.attributes")
            let service = resourceAttributes["service.name"] ?? "unknown_service"
            let instance = resourceAttributes["service.instance.id"]
            let scopes = field(resourceObject, "scopeSpans") ?? field(resourceObject, "instrumentationLibrarySpans") ?? .array([])
            for (s, scope) in try array(scopes, path + ".scopeSpans").enumerated() {
                let scopePath = "\(path).scopeSpans[\(s)]"
                let scopeObject = try objectOf(scope, scopePath)
                for (n, span) in try array(field(scopeObject, "spans") ?? .array([]), scopePath + ".spans").enumerated() {
                    spans.append(try self.span(span, path: "\(scopePath).spans[\(n)]", service: service, instance: instance))
                }
            }
        }
        return spans
    }

    static func span(_ value: JSONValue, path: String, service: String, instance: String?) throws(Problem) -> Span {
        let object = try objectOf(value, path)
        let traceID = try id(field(object, "traceId"), bytes: 16, path + ".traceId")
        let spanID = try id(field(object, "spanId"), bytes: 8, path + ".spanId")
        var parent: String?
        if let parentValue = field(object, "parentSpanId"), parentValue != .string(""), parentValue != .null {
            parent = try id(parentValue, bytes: 8, path + ".parentSpanId")
        }
        guard let name = field(object, "name")?.stringValue, !name.isEmpty else {
            throw Problem("\(path).name: missing or not a non-empty string")
        }
        let start = try nanos(field(object, "startTimeUnixNano"), path + ".startTimeUnixNano")
        let end = try nanos(field(object, "endTimeUnixNano"), path + ".endTimeUnixNano")
        guard end >= start else { throw Problem("\(path).endTimeUnixNano: \(end) is before startTimeUnixNano \(start)") }
        var status: String?
        if let statusObject = field(object, "status")?.objectValue, let code = field(statusObject, "code"),
            code == .number(2) || code == .string("STATUS_CODE_ERROR")
        {
            let message = field(statusObject, "message")?.stringValue ?? ""
            status = message.isEmpty ? "error" : "error: \(message)"
        }
        return Span(
            traceID: traceID, spanID: spanID, parentSpanID: parent, name: name, kind: try kind(field(object, "kind"), path + ".kind"),
            service: service,
            instance: instance, start: start, end: end, attributes: try attributes(field(object, "attributes"), path + ".attributes"),
            status: status)
    }

    /// `key` in lowerCamelCase, or as protobuf's field name (snake_case).
    static func field(_ object: [String: JSONValue], _ key: String) -> JSONValue? {
        if let value = object[key] { return value }
        var snake = ""
        for character in key {
            if character.isUppercase { snake += "_" + character.lowercased() } else { snake.append(character) }
        }
        return object[snake]
    }

    static func objectOf(_ value: JSONValue, _ path: String) throws(Problem) -> [String: JSONValue] {
        guard let object = value.objectValue else { throw Problem("\(path): must be an object") }
        return object
    }

    static func array(_ value: JSONValue, _ path: String) throws(Problem) -> [JSONValue] {
        guard let array = value.arrayValue else { throw Problem("\(path): must be an array") }
        return array
    }

    /// A trace id (16 bytes) or span id (8 bytes): hex as OTLP JSON says, or base64 as protobuf's
    /// JSON mapping does; all zeros is invalid.
    static func id(_ value: JSONValue?, bytes: Int, _ path: String) throws(Problem) -> String {
        guard let text = value?.stringValue else { throw Problem("\(path): missing or not a string") }
        var hex = text.lowercased()
        if hex.count != bytes * 2 || !hex.allSatisfy(\.isHexDigit) {
            guard let data = Data(base64Encoded: text), data.count == bytes else {
                throw Problem("\(path): must be \(bytes * 2) hex digits, got \"\(text.prefix(40))\"")
            }
            hex = data.map { String(format: "%02x", $0) }.joined()
        }
        guard hex.contains(where: { $0 != "0" }) else { throw Problem("\(path): must not be all zeros") }
        return hex
    }

    /// A time in Unix nanoseconds: a decimal string (OTLP JSON) or a number.
    static func nanos(_ value: JSONValue?, _ path: String) throws(Problem) -> UInt64 {
        switch value {
        case .string(let text):
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let nanos = UInt64(text) else {
                throw Problem("\(path): must be Unix nanoseconds as a decimal string, got \"\(text.prefix(40))\"")
            }
            return nanos
        case .number(let number) where number >= 0 && number < 1.8e19 && number.rounded() == number:
            return UInt64(number)
        case nil, .null:
            throw Problem("\(path): missing")
        default:
            throw Problem("\(path): must be Unix nanoseconds as a decimal string")
        }
    }

    static let kinds: [Span.Kind] = [.unspecified, .internal, .server, .client, .producer, .consumer]

    static func kind(_ value: JSONValue?, _ path: String) throws(Problem) -> Span.Kind {
        switch value {
        case nil, .null: return .unspecified
        case .number(let number) where number >= 0 && number < Double(kinds.count) && number.rounded() == number:
            return kinds[Int(number)]
        case .string(let name) where name.hasPrefix("SPAN_KIND_"):
            if let kind = Span.Kind(rawValue: name.dropFirst("SPAN_KIND_".count).lowercased()) { return kind }
        default: break
        }
        throw Problem("\(path): must be a span kind from 0 to 5, got \(value.flatMap { try? JSONCoding.encodeText($0) } ?? "nothing")")
    }

    /// OTLP's `[{"key": …, "value": AnyValue}]` as text values.
    static func attributes(_ value: JSONValue?, _ path: String) throws(Problem) -> [String: String] {
        guard let value, value != .null else { return [:] }
        var result: [String: String] = [:]
        for (i, pair) in try array(value, path).enumerated() {
            guard let key = pair["key"]?.stringValue else { throw Problem("\(path)[\(i)].key: missing or not a string") }
            result[key] = try text(of: pair["value"] ?? .null, "\(path)[\(i)].value")
        }
        return result
    }

    static func text(of anyValue: JSONValue, _ path: String) throws(Problem) -> String {
        guard let object = anyValue.objectValue else {
            if anyValue == .null { return "" }
            throw Problem("\(path): must be an AnyValue object such as {\"stringValue\":\"…\"}")
        }
        if let string = field(object, "stringValue")?.stringValue { return string }
        if case .bool(let flag)? = field(object, "boolValue") { return flag ? "true" : "false" }
        if let int = field(object, "intValue") {
            if let string = int.stringValue { return string }
            if let number = int.numberValue, number.rounded() == number, abs(number) < 9.2e18 { return String(Int64(number)) }
        }
        if let number = field(object, "doubleValue")?.numberValue { return String(number) }
        for key in ["arrayValue", "kvlistValue", "bytesValue"] {
            if let other = field(object, key) { return other.stringValue ?? ((try? JSONCoding.encodeText(other)) ?? "") }
        }
        if object.isEmpty { return "" }
        throw Problem(
            "\(path): an AnyValue needs one of stringValue, boolValue, intValue, doubleValue, arrayValue, kvlistValue, bytesValue")
    }
}
