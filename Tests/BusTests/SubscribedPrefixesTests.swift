import Bus
import Testing

@Suite struct SubscribedPrefixesTests {
    static func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

    @Test func aPrefixCoversTheTopicsItStarts() {
        var prefixes = SubscribedPrefixes()
        #expect(!prefixes.covers(Self.bytes("order.1")))
        prefixes.insert(Self.bytes("device.location.42"))
        prefixes.insert(Self.bytes("order."))
        prefixes.insert(Self.bytes("order."))
        #expect(prefixes.count == 2)
        #expect(prefixes.covers(Self.bytes("order.status.ACCEPTED")))
        #expect(prefixes.covers(Self.bytes("device.location.42")))
        #expect(!prefixes.covers(Self.bytes("device.location.4")))
        #expect(!prefixes.covers(Self.bytes("device.location.43")))
        #expect(!prefixes.covers(Self.bytes("order")))
        prefixes.remove(Self.bytes("order."))
        prefixes.remove(Self.bytes("never.subscribed"))
        #expect(!prefixes.covers(Self.bytes("order.status.ACCEPTED")))
        #expect(prefixes.covers(Self.bytes("device.location.42.more")))
        // The empty prefix covers everything, the empty topic included.
        prefixes.insert([UInt8]())
        #expect(prefixes.covers([]))
        #expect(prefixes.covers(Self.bytes("chat.1")))
    }

    /// Against the definition (some prefix starts the topic) over random subscriptions and
    /// unsubscriptions of prefixes of many lengths, as a bus sends them.
    @Test func itAgreesWithAScanOfEveryPrefix() {
        var random = SystemRandomNumberGenerator()
        let alphabet = Self.bytes("ab.")
        func word(_ length: Int) -> [UInt8] { (0..<length).map { _ in alphabet.randomElement(using: &random)! } }
        var prefixes = SubscribedPrefixes()
        var reference: Set<[UInt8]> = []
        for _ in 0..<2_000 {
            let prefix = word(Int.random(in: 0...5, using: &random))
            if Bool.random(using: &random) {
                prefixes.insert(prefix)
                reference.insert(prefix)
            } else {
                prefixes.remove(prefix)
                reference.remove(prefix)
            }
            let topic = word(Int.random(in: 0...7, using: &random))
            #expect(prefixes.covers(topic) == reference.contains { topic.starts(with: $0) }, "\(topic) under \(reference)")
            #expect(prefixes.count == reference.count)
        }
    }
}
