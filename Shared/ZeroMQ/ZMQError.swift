import CZeroMQ

/// A libzmq call that failed, with the library's own explanation (`zmq_strerror`).
public struct ZMQError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The `errno` value libzmq reported (`EADDRINUSE`, `EAGAIN`, `EHOSTUNREACH`, ...).
    public let code: Int32
    /// What we were doing, e.g. `bind tcp://*:5555`.
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// The error libzmq recorded for the calling thread.
    public static func last(_ operation: String) -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation)
    }

    /// `zmq_strerror` text, e.g. "Address already in use".
    public var message: String { String(cString: zmq_strerror(code)) }

    public var description: String { "\(operation): \(message)" }

    public var isAgain: Bool { code == EAGAIN }
    public var isInterrupted: Bool { code == EINTR }
    /// The context was terminated: every socket call fails this way afterwards.
    public var isTerminated: Bool { code == ETERM_CODE }
    /// A ROUTER with `ZMQ_ROUTER_MANDATORY` was asked to send to a peer that is gone.
    public var isHostUnreachable: Bool { code == EHOSTUNREACH }
    public var isAddressInUse: Bool { code == EADDRINUSE }
}

// ETERM is defined by zmq.h as a macro on top of ZMQ_HAUSNUMERO; Swift imports it as a computed value.
let ETERM_CODE: Int32 = Int32(ETERM)
