import RideModels

/// Statuses sent once each, in order: one already sent (fetched at the opening, or repeated by
/// the bus) or older than the snapshot is skipped. Chat messages likewise once each, and only to
/// the two parties (`viewer`): a driver who was offered the order and watches it does not read
/// the chat of the driver who took it. Other messages always pass.
struct StatusesOnce {
    var lastSequence: UInt64 = 0
    var lastVersion = 0
    /// The connection's user; nil on connections that carry no chat.
    var viewer: String? = nil
    var lastChatSequence: UInt64 = 0

    /// Whether `viewer` sent or receives the chat message (other messages: always).
    static func isParty(_ viewer: String?, to message: LiveMessage) -> Bool {
        guard case .chat(let chat) = message else { return true }
        guard let viewer else { return false }
        return chat.message.senderID == viewer || chat.message.recipientID == viewer
    }

    /// Set by a status that shows the viewer is no longer the order's rider, its driver or one of
    /// the drivers it is offered to; `admits` then says yes once more, for the relay to refuse.
    private(set) var revoked = false

    mutating func admits(_ message: LiveMessage) -> Bool {
        if case .chat(let chat) = message {
            guard Self.isParty(viewer, to: message), chat.sequence > lastChatSequence else { return false }
            lastChatSequence = chat.sequence
            return true
        }
        guard let (sequence, order) = message.orderChange else { return true }
        if let viewer, ![order.rider.id, order.driver?.id].contains(viewer), !order.offeredTo.contains(viewer) {
            revoked = true
            return true
        }
        guard sequence > lastSequence, order.version > lastVersion else { return false }
        (lastSequence, lastVersion) = (sequence, order.version)
        return true
    }
}
