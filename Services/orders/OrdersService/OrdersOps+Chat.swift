import Bus
import RideContract
import RideModels

/// An order's chat: its rider and driver write to each other; each reads only the messages they
/// sent or were sent — after a re-dispatch the next driver does not read the chat with the last.
extension OrdersOps {
    func registerChat(on router: inout OpRouter) {
        router.on(Ops.Orders.sendMessage) { (params: SendMessageParams, _) -> Replied<ChatMessage> in
            Replied(status: Status.created, body: try await sendMessage(params))
        }
        router.on(Ops.Orders.messages) { (params: MessagesParams, _) -> ChatMessages in
            let limit = params.limit ?? 100
            let after = params.after ?? 0
            let order = try await existing(params.id)
            guard ConversationRules.canRead(params.caller, order) else {
                throw forbidden("only the rider and the driver of order \(order.id) read its chat")
            }
            let messages = try await store.messages(orderID: order.id, after: after, limit: limit).filter {
                Self.isParty(params.caller, to: $0)
            }
            return ChatMessages(orderID: order.id, open: ConversationRules.isOpen(order), messages: messages)
        }
    }

    /// Whether `caller` sent `message` or was sent it.
    static func isParty(_ caller: Caller, to message: ChatMessage) -> Bool {
        message.senderID == caller.id || message.recipientID == caller.id
    }
}
