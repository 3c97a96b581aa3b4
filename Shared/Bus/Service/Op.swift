import Wire

/// One op of one service, with the types of its params and of its successful reply. Ops are
/// declared once, in the RideContract module; servers register handlers for them
/// (`router.on(Ops.Orders.accept) { … }`) and clients call them (`client.call(Ops.Orders.accept, params)`),
/// so a name or a type cannot differ between the two ends.
public struct Op<Params: Codable & Sendable, Reply: Sendable>: Sendable {
    public let service: String
    public let name: String
    /// One line for the docs' op table and the API document.
    public let summary: String

    public init(_ service: String, _ name: String, _ summary: String) {
        self.service = service
        self.name = name
        self.summary = summary
    }

    /// `orders.accept`.
    public var fullName: String { "\(service).\(name)" }

    /// The op without its types, for catalogs (docs, the fuzzer, the API document).
    public var descriptor: OpDescriptor {
        OpDescriptor(service: service, name: name, summary: summary, paramsType: Params.self, replyType: Reply.self) {
            json throws(ServiceError) in
            _ = try OpRouter.decodeParams(Params.self, op: name, from: json)
        }
    }
}

/// An op as data: names, types and how its router decodes its params.
public struct OpDescriptor: Sendable {
    public let service: String
    public let name: String
    public let summary: String
    public let paramsType: any Any.Type
    public let replyType: any Any.Type
    /// Decodes params exactly as the op's router does (`OpRouter.decodeParams`).
    public let decodeParams: @Sendable (_ json: [UInt8]) throws(ServiceError) -> Void

    public var fullName: String { "\(service).\(name)" }
    public var paramsSchema: WireSchema? { (paramsType as? any WireValue.Type)?.wireSchema }
    public var replySchema: WireSchema? { (replyType as? any WireValue.Type)?.wireSchema }
    /// Swift's name of a type without its module (`CreateOrderParams`, `Trip.Destination`).
    public static func typeName(_ type: any Any.Type) -> String { String(describing: type) }
}
