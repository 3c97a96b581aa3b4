import Foundation
import Wire

/// A message between the rider and the driver of an order (AxRide's in-ride chat). Stored by
/// `orders` with the order; published on `order.message.<order_id>`.
@WireModel
public struct ChatMessage: Codable, Sendable, Equatable {
    public var id: String
    public var orderID: String
    /// 1, 2, 3… within the order: the order apps show messages in.
    public var number: Int
    public var senderID: String
    public var senderRole: UserRole
    public var recipientID: String
    public var text: String
    public var sentAt: Date

    public init(
        id: String, orderID: String, number: Int, senderID: String, senderRole: UserRole, recipientID: String, text: String, sentAt: Date
    ) {
        self.id = id
        self.orderID = orderID
        self.number = number
        self.senderID = senderID
        self.senderRole = senderRole
        self.recipientID = recipientID
        self.text = text
        self.sentAt = sentAt
    }
}

/// `order.message.<order_id>` data.
@WireModel
public struct ChatMessageSent: Codable, Sendable, Equatable {
    public var message: ChatMessage
    public init(message: ChatMessage) { self.message = message }
}

extension ChatMessageSent {
    /// The order's id, read without decoding the rest (as `OrderStatusChanged.orderID(in:)`).
    public static func orderID(in data: JSONValue) -> String? {
        data[CodingKeys.message.stringValue]?[ChatMessage.CodingKeys.orderID.stringValue]?.stringValue
    }
}

/// `orders.send_message`.
@WireModel
public struct SendMessageParams: Codable, Sendable, Equatable {
    public var caller: Caller
    /// The order.
    public var id: String
    @WireField(maxLength: 2000, pattern: TextPatterns.message, meaning: TextPatterns.messageMeaning)
    public var text: String

    public init(caller: Caller, id: String, text: String) {
        self.caller = caller
        self.id = id
        self.text = text
    }
}

/// `orders.messages`: the order's chat after message `after` (0 or absent: from the start).
@WireModel
public struct MessagesParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var id: String
    @WireField(minimum: 0)
    public var after: Int?
    @WireField(minimum: 1, maximum: 500)
    public var limit: Int?

    public init(caller: Caller, id: String, after: Int? = nil, limit: Int? = nil) {
        self.caller = caller
        self.id = id
        self.after = after
        self.limit = limit
    }
}

/// `orders.messages`' reply. `open` is false once the order is finished: the chat is read-only.
@WireModel
public struct ChatMessages: Codable, Sendable, Equatable {
    public var orderID: String
    public var open: Bool
    public var messages: [ChatMessage]

    public init(orderID: String, open: Bool, messages: [ChatMessage]) {
        self.orderID = orderID
        self.open = open
        self.messages = messages
    }
}
