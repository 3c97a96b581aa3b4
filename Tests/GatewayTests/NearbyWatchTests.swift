import Testing
import Wire

@testable import GatewayService

/// What a `/v1/me/live` client message asks of nearby cars.
@Suite struct NearbyWatchTests {
    static let caller: JSONValue = ["role": "rider", "id": "r1"]

    @Test func aWatchIsTheQueryWithTheCallerFilledIn() {
        #expect(
            NearbyWatch.ask(
                #"{"watch_nearby":{"latitude":47.8,"longitude":35.1,"caller":{"role":"driver","id":"d1"}}}"#, caller: Self.caller)
                == .watch(["latitude": 47.8, "longitude": 35.1, "caller": Self.caller]),
            "the caller is the connection's, whatever the message says")
        #expect(NearbyWatch.ask(#"{"watch_nearby":null}"#, caller: Self.caller) == .stop)
        #expect(NearbyWatch.ask(#"{"ping":1}"#, caller: Self.caller) == .other)
        #expect(NearbyWatch.ask("not json", caller: Self.caller) == .other)
        guard case .invalid(let why) = NearbyWatch.ask(#"{"watch_nearby":[47.8,35.1]}"#, caller: Self.caller) else {
            Issue.record("an array is not a watch")
            return
        }
        #expect(why.hasPrefix("watch_nearby:"))
    }
}
