import Bus
import Foundation
import Testing
import Wire

/// What a sealing router keeps of a keyed request: a keyed hash, and a reply only the same request opens.
@Suite struct RequestSealingTests {
    let sealing = RequestSealing(secret: Array(repeating: 7, count: 32))

    func key(_ json: String, sealing: RequestSealing? = nil) throws -> RequestKey {
        try #require(try RequestKey(op: "login", json: Array(json.utf8), sealing: sealing))
    }

    @Test func theReplyOpensOnlyForTheSameRequestAndHoldsNothingReadable() throws {
        let login = #"{"phone_number":"+380501110001","password":"secret123","request_id":"k1"}"#
        let reply = ServiceReply(status: 200, json: Array(#"{"token":"eyJhbGciOiJIUzI1NiJ9.payload.sig","refresh_token":"s-1.abc"}"#.utf8))
        let stored = try sealing.seal(reply, for: try key(login, sealing: sealing))
        #expect(
            stored.status == 200 && !String(decoding: stored.json, as: UTF8.self).contains("eyJ"),
            "\(String(decoding: stored.json, as: UTF8.self))")
        #expect(sealing.open(stored, for: try key(login, sealing: sealing)) == reply, "a retry opens it")
        let otherPassword = login.replacingOccurrences(of: "secret123", with: "secret124")
        #expect(sealing.open(stored, for: try key(otherPassword, sealing: sealing)) == nil, "another request does not")
        #expect(
            RequestSealing(secret: Array(repeating: 8, count: 32)).open(stored, for: try key(login, sealing: sealing)) == nil,
            "nor another secret")
        #expect(sealing.open(reply, for: try key(login, sealing: sealing)) == nil, "a reply kept before sealing is not a sealed one")
    }

    @Test func theHashIsKeyedSoATableTestsNoGuess() throws {
        let login = #"{"phone_number":"+380501110001","password":"secret123","request_id":"k1"}"#
        let plain = try key(login)
        let keyed = try key(login, sealing: sealing)
        #expect(keyed.hash.count == 64 && keyed.hash != plain.hash, "not the SHA-256 anyone can compute from a guess")
        #expect(try key(login, sealing: sealing).hash == keyed.hash, "the same request, the same hash")
    }
}
