import Bus
import ZeroMQ

/// The properties libFuzzer checks (Fuzz/main) and the seed corpus replays in `swift test`
/// (Fuzz/Tests): whatever arrives from a socket is understood or refused with the protocol's own
/// error — never a crash, never a 5xx for a request's fault.
///
/// An input's first line names what the rest feeds (Fuzz/README.md has examples):
/// - `event`: a CloudEvent's JSON, as a subscriber decodes it;
/// - `mdp`: 7/MDP messages, each a sender line and then one frame a line, `--` between messages:
///   the broker's, the worker's and the client's parsers, then one broker fed all of them;
/// - `events-batch`: one frame as a publisher sends several events to the bus (`EventBatch`);
/// - `<service>.<op>` (e.g. `users.register`): that op's params JSON, decoded as its router does.
public enum ProtocolFuzz {
    /// What the input breaks; empty when every property holds. A trap in the code under test is not
    /// caught here: it stops the process, and libFuzzer reports it as a crash.
    public static func violations(of input: [UInt8]) -> [String] {
        let newline = input.firstIndex(of: UInt8(ascii: "\n")) ?? input.endIndex
        let target = String(decoding: input[..<newline], as: UTF8.self)
        let payload = Array(input[min(newline + 1, input.endIndex)...])
        var findings = Findings()
        switch target {
        case "event": EnvelopeProperties.check(payload, &findings)
        case "mdp": MDPProperties.check(payload, &findings)
        case "events-batch": EventBatchProperties.check(payload, &findings)
        default:
            // An unknown target is no input at all (libFuzzer soon learns the names from the seeds).
            guard let op = OpParams.byName[target] else { break }
            ParamsProperties.check(op, payload, &findings)
        }
        return findings.violations
    }
}

/// The broken properties of one input.
struct Findings {
    private(set) var violations: [String] = []

    mutating func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { violations.append(message()) }
    }
}

extension [UInt8] {
    /// The bytes for a message, with invalid UTF-8 shown as the replacement character.
    var shown: String { String(decoding: prefix(300), as: UTF8.self) + (count > 300 ? "…" : "") }
}
