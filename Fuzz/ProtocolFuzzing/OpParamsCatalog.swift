import Bus
import RideContract

/// One op of one service and how its router decodes the op's params: through
/// `OpRouter.decodeParams`, the function every handler's params are decoded with.
public struct OpParams: Sendable {
    public let service: String
    public let op: String
    /// The params type as Swift names it.
    public let typeName: String
    public let decode: @Sendable (_ json: [UInt8]) throws(ServiceError) -> Void

    public init(service: String, op: String, typeName: String, decode: @escaping @Sendable (_ json: [UInt8]) throws(ServiceError) -> Void) {
        self.service = service
        self.op = op
        self.typeName = typeName
        self.decode = decode
    }

    /// How a fuzz input names this op: `users.register`.
    public var name: String { "\(service).\(op)" }
}

extension OpParams {
    /// Every op of every service, from the contract (`RideContract.ops`), with the decoding its router does.
    public static let all: [OpParams] = RideContract.ops.map { op in
        OpParams(service: op.service, op: op.name, typeName: OpDescriptor.typeName(op.paramsType), decode: op.decodeParams)
    }

    static let byName: [String: OpParams] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
