import ZeroMQ

/// 7/MDP 0.1 (rfc.zeromq.org/spec/7) frames, encoded and decoded exactly as the RFC says, or packed
/// into one frame (`Envelope`, MDPPacked.swift): each encoder takes the envelope, each parser reads both.
///
/// Every message below is what follows the peer's routing id on the broker's ROUTER socket, or what a
/// DEALER sends and receives. In the standard envelope both start with an empty delimiter frame, as
/// the RFC's REQ/REP compatible framing requires.
public enum MDP {
    public static let clientHeader: Frame = Array("MDPC01".utf8)
    public static let workerHeader: Frame = Array("MDPW01".utf8)
    static let empty: Frame = []

    public enum Command: UInt8, Sendable, CustomStringConvertible {
        case ready = 0x01
        case request = 0x02
        case reply = 0x03
        case heartbeat = 0x04
        case disconnect = 0x05

        public var description: String {
            switch self {
            case .ready: "READY"
            case .request: "REQUEST"
            case .reply: "REPLY"
            case .heartbeat: "HEARTBEAT"
            case .disconnect: "DISCONNECT"
            }
        }
    }

    // MARK: Client ↔ broker

    /// Client → broker: `[""]["MDPC01"][service][body...]`.
    public static func clientRequest(service: String, body: [Frame], envelope: Envelope = .standard) -> [Frame] {
        clientReply(service: Frame(frame: service), body: body, envelope: envelope)
    }

    /// Broker → client: `[""]["MDPC01"][service][body...]`.
    public static func clientReply(service: Frame, body: [Frame], envelope: Envelope = .standard) -> [Frame] {
        packs(envelope, name: service, body: body)
            ? [packedClient(service: service, body: body[0])] : [empty, clientHeader, service] + body
    }

    /// A reply as a client sees it. `frames` starts at the empty delimiter.
    public static func parseClientReply(_ frames: [Frame]) throws(MDPError) -> (service: String, body: [Frame]) {
        if envelope(of: frames) == .packed {
            let (header, rest) = try unpack(frames[0])
            guard header == clientHeader else { throw .wrongHeader(header) }
            return try unpackClient(rest)
        }
        guard frames.count >= 3 else { throw .truncated("a client reply needs [\"\"][MDPC01][service]; got \(frames.count) frames") }
        guard frames[0].isEmpty else { throw .missingDelimiter }
        guard frames[1] == clientHeader else { throw .wrongHeader(frames[1]) }
        guard let service = frames[2].utf8String else { throw .invalidServiceName }
        return (service, Array(frames[3...]))
    }

    // MARK: Worker ↔ broker

    /// `[""]["MDPW01"][command][rest...]`.
    public static func workerMessage(_ command: Command, _ rest: [Frame] = []) -> [Frame] {
        [empty, workerHeader, [command.rawValue]] + rest
    }

    /// Worker → broker READY: `[""]["MDPW01"][0x01][service]`.
    public static func ready(service: String, envelope: Envelope = .standard) -> [Frame] {
        let name = Frame(frame: service)
        return envelope == .packed && !name.isEmpty ? [packedWorker(.ready, body: name)] : workerMessage(.ready, [name])
    }

    /// Broker → worker REQUEST: `[""]["MDPW01"][0x02][client][""][body...]`.
    public static func request(client: Frame, body: [Frame], envelope: Envelope = .standard) -> [Frame] {
        addressed(.request, client: client, body: body, envelope: envelope)
    }

    /// Worker → broker REPLY: `[""]["MDPW01"][0x03][client][""][body...]`.
    public static func reply(client: Frame, body: [Frame], envelope: Envelope = .standard) -> [Frame] {
        addressed(.reply, client: client, body: body, envelope: envelope)
    }

    private static func addressed(_ command: Command, client: Frame, body: [Frame], envelope: Envelope) -> [Frame] {
        packs(envelope, name: client, body: body)
            ? [packedWorker(command, client: client, body: body[0])] : workerMessage(command, [client, empty] + body)
    }

    /// HEARTBEAT: `[""]["MDPW01"][0x04]`.
    public static func heartbeat(_ envelope: Envelope = .standard) -> [Frame] {
        envelope == .packed ? [packedWorker(.heartbeat)] : workerMessage(.heartbeat)
    }

    /// DISCONNECT: `[""]["MDPW01"][0x05]`.
    public static func disconnect(_ envelope: Envelope = .standard) -> [Frame] {
        envelope == .packed ? [packedWorker(.disconnect)] : workerMessage(.disconnect)
    }

    /// What a worker receives from the broker. `frames` starts at the empty delimiter.
    public enum BrokerToWorker: Equatable, Sendable {
        case request(client: Frame, body: [Frame])
        case heartbeat
        case disconnect
    }

    public static func parseBrokerToWorker(_ frames: [Frame]) throws(MDPError) -> BrokerToWorker {
        if envelope(of: frames) == .packed {
            let (header, rest) = try unpack(frames[0])
            guard header == workerHeader else { throw .wrongHeader(header) }
            let (command, arguments) = try unpackWorker(rest)
            switch command {
            case .request:
                let (client, body) = try unpackAddressed(arguments)
                return .request(client: client, body: body)
            case .heartbeat: return .heartbeat
            case .disconnect: return .disconnect
            case .ready, .reply: throw .unexpectedCommand(command)
            }
        }
        let (command, rest) = try splitWorkerMessage(frames)
        switch command {
        case .request:
            guard rest.count >= 2, rest[1].isEmpty else { throw .truncated("REQUEST needs [client][\"\"][body...]") }
            return .request(client: rest[0], body: Array(rest[2...]))
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
        case .ready, .reply: throw .unexpectedCommand(command)
        }
    }

    // MARK: Broker side

    /// Anything that reaches the broker's ROUTER, after the sender's routing id.
    public enum ToBroker: Equatable, Sendable {
        case clientRequest(service: String, body: [Frame])
        case ready(service: String)
        case reply(client: Frame, body: [Frame])
        case heartbeat
        case disconnect
    }

    public static func parseToBroker(_ frames: ArraySlice<Frame>) throws(MDPError) -> ToBroker {
        if envelope(of: frames) == .packed { return try parsePackedToBroker(frames[frames.startIndex]) }
        guard let first = frames.first else { throw .truncated("empty message") }
        guard first.isEmpty else { throw .missingDelimiter }
        guard frames.count >= 2 else { throw .truncated("no protocol header after the delimiter") }
        let header = frames[frames.startIndex + 1]
        if header == clientHeader {
            guard frames.count >= 3 else { throw .truncated("a client request needs a service name") }
            guard let service = frames[frames.startIndex + 2].utf8String, !service.isEmpty else { throw .invalidServiceName }
            return .clientRequest(service: service, body: Array(frames.dropFirst(3)))
        }
        guard header == workerHeader else { throw .wrongHeader(header) }
        let (command, rest) = try splitWorkerMessage(Array(frames))
        switch command {
        case .ready:
            guard rest.count == 1, let service = rest[0].utf8String, !service.isEmpty else { throw .invalidServiceName }
            return .ready(service: service)
        case .reply:
            guard rest.count >= 2, rest[1].isEmpty else { throw .truncated("REPLY needs [client][\"\"][body...]") }
            return .reply(client: rest[0], body: Array(rest[2...]))
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
        case .request: throw .unexpectedCommand(command)
        }
    }

    /// Whether `frames` (after the routing id) say MDPW01, in either envelope: a worker's, however broken.
    static func speaksWorker(_ frames: ArraySlice<Frame>) -> Bool {
        if envelope(of: frames) == .packed { return frames[frames.startIndex].starts(with: workerHeader) }
        return frames.count >= 2 && frames[frames.startIndex + 1] == workerHeader
    }

    private static func parsePackedToBroker(_ frame: Frame) throws(MDPError) -> ToBroker {
        let (header, rest) = try unpack(frame)
        if header == clientHeader {
            let (service, body) = try unpackClient(rest)
            guard !service.isEmpty else { throw .invalidServiceName }
            return .clientRequest(service: service, body: body)
        }
        let (command, arguments) = try unpackWorker(rest)
        switch command {
        case .ready:
            guard let service = Array(arguments).utf8String else { throw .invalidServiceName }
            return .ready(service: service)
        case .reply:
            let (client, body) = try unpackAddressed(arguments)
            return .reply(client: client, body: body)
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
        case .request: throw .unexpectedCommand(command)
        }
    }

    private static func splitWorkerMessage(_ frames: [Frame]) throws(MDPError) -> (Command, [Frame]) {
        guard frames.count >= 3 else { throw .truncated("a worker message needs [\"\"][MDPW01][command]; got \(frames.count) frames") }
        guard frames[0].isEmpty else { throw .missingDelimiter }
        guard frames[1] == workerHeader else { throw .wrongHeader(frames[1]) }
        guard frames[2].count == 1, let command = Command(rawValue: frames[2][0]) else { throw .unknownCommand(frames[2]) }
        return (command, Array(frames[3...]))
    }
}

/// A message that does not follow 7/MDP.
public enum MDPError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingDelimiter
    case wrongHeader(Frame)
    case truncated(String)
    case unknownCommand(Frame)
    case unexpectedCommand(MDP.Command)
    case invalidServiceName

    public var description: String {
        switch self {
        case .missingDelimiter: "missing the empty delimiter frame"
        case .wrongHeader(let header):
            "unknown protocol header \(header.utf8String.map { "\"\($0)\"" } ?? "\(header.prefix(16))") (expected MDPC01 or MDPW01)"
        case .truncated(let what): "truncated message: \(what)"
        case .unknownCommand(let frame): "unknown worker command \(frame.prefix(4))"
        case .unexpectedCommand(let command): "\(command) is not valid in this direction"
        case .invalidServiceName: "service name missing, empty or not UTF-8"
        }
    }
}
