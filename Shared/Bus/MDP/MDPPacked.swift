import ZeroMQ

/// 7/MDP's frames packed into one, between peers that both speak it (docs/design.md#one-frame-requests).
///
/// A secured bus seals every frame on its own (ZMTP-CURVE), and 7/MDP's envelope is most of a
/// request's frames: 20 across its four hops against 4 packed. A packed message is a single frame,
/// where a 7/MDP one always starts with an empty delimiter, so the two never look alike:
///
/// - client ↔ broker: `MDPC01` ‖ service length (1 byte) ‖ service ‖ body
/// - worker ↔ broker: `MDPW01` ‖ command (1 byte) ‖ READY: service; REQUEST and REPLY: client id
///   length (1 byte) ‖ client id ‖ body; HEARTBEAT and DISCONNECT: nothing
///
/// The body is the message's one body frame (a body of several frames is never packed). Who packs:
/// ride-bus announces it can on every connection (`envelopeProperty`); a client or worker packs only
/// towards a broker that announced it, and the broker answers a client in the envelope it asked in
/// and sends a worker requests in the envelope the worker last used.
extension MDP {
    public enum Envelope: Sendable, Equatable, CustomStringConvertible {
        /// 7/MDP's frames, as the RFC has them.
        case standard
        /// One frame.
        case packed

        public var description: String { self == .packed ? "packed" : "standard" }
    }

    /// The ZMTP metadata property (name and value) with which a broker says it reads and writes packed messages.
    public static let envelopeProperty = (name: "X-MDP-Envelope", packed: "packed")

    /// The envelope a peer announces through `envelopeProperty`: what a message received from it says.
    public static func envelope(announced value: String?) -> Envelope { value == envelopeProperty.packed ? .packed : .standard }

    /// How `frames` (after any routing id) travel: a single non-empty frame is packed.
    public static func envelope(of frames: some Collection<Frame>) -> Envelope {
        frames.count == 1 && frames.first?.isEmpty == false ? .packed : .standard
    }

    /// Whether a message with these parts can be packed: one body frame, and ids and names that fit their length byte.
    static func packs(_ envelope: Envelope, name: Frame, body: [Frame]) -> Bool {
        envelope == .packed && body.count == 1 && (1...255).contains(name.count)
    }

    static func packedClient(service: Frame, body: Frame) -> Frame {
        clientHeader + [UInt8(service.count)] + service + body
    }

    static func packedWorker(_ command: Command, client: Frame? = nil, body: Frame = []) -> Frame {
        var frame = workerHeader + [command.rawValue]
        if let client { frame += [UInt8(client.count)] + client }
        return frame + body
    }

    /// A packed message's header and the bytes after it.
    static func unpack(_ frame: Frame) throws(MDPError) -> (header: Frame, rest: ArraySlice<UInt8>) {
        let header = Array(frame.prefix(clientHeader.count))
        guard header == clientHeader || header == workerHeader else { throw .wrongHeader(header) }
        return (header, frame.dropFirst(header.count))
    }

    /// A length byte, the field it measures (1 to 255 bytes), and what follows.
    static func field(in bytes: ArraySlice<UInt8>, _ what: String) throws(MDPError) -> (field: Frame, rest: ArraySlice<UInt8>) {
        guard let length = bytes.first, length > 0, bytes.count > Int(length) else {
            throw .truncated("a packed message's \(what) is missing or longer than the message")
        }
        let start = bytes.startIndex + 1
        return (Array(bytes[start..<start + Int(length)]), bytes[(start + Int(length))...])
    }

    /// A packed client message: its service and body.
    static func unpackClient(_ rest: ArraySlice<UInt8>) throws(MDPError) -> (service: String, body: [Frame]) {
        let (service, body) = try field(in: rest, "service name")
        guard let name = service.utf8String else { throw .invalidServiceName }
        return (name, [Array(body)])
    }

    /// A packed worker message: its command and what follows the command byte.
    static func unpackWorker(_ rest: ArraySlice<UInt8>) throws(MDPError) -> (command: Command, rest: ArraySlice<UInt8>) {
        guard let byte = rest.first else { throw .truncated("a packed worker message needs a command") }
        guard let command = Command(rawValue: byte) else { throw .unknownCommand([byte]) }
        let arguments = rest.dropFirst()
        switch command {
        case .heartbeat, .disconnect:
            guard arguments.isEmpty else { throw .truncated("a packed \(command) has nothing after its command") }
        case .ready:
            guard !arguments.isEmpty else { throw .invalidServiceName }
        case .request, .reply: break
        }
        return (command, arguments)
    }

    /// A packed REQUEST's or REPLY's client id and body.
    static func unpackAddressed(_ arguments: ArraySlice<UInt8>) throws(MDPError) -> (client: Frame, body: [Frame]) {
        let (client, body) = try field(in: arguments, "client id")
        return (client, [Array(body)])
    }
}
