import Bus
import Foundation
import PlatformLauncher
import Testing
import Wire

/// Ride reports through the real gateway, orders and notifications: a rider reports a problem, an
/// operator lists it in the dashboard with the ride's timeline and answers it, the rider's inbox
/// has the answer; a lost item after the ride reopens the chat for both.
@Suite(.serialized) struct RideReportIntegrationTests {
    static let basic = ["Authorization": "Basic " + Data("ridesharing:sk_dev_ridesharing".utf8).base64EncodedString()]

    @Test func aReportIsListedWithItsTimelineAnsweredAndTheReporterNotifiedAndALostItemReopensTheChat() async throws {
        try await withTestBus("ride-reports") { bus in
            _ = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway
            let id = try await apps.ride()

            // The rider reports the fare (a retry with its Idempotency-Key files it once); bad reports change nothing.
            let reportKey = ["Idempotency-Key": "report-\(UUID().uuidString)"]
            let fare = try await gateway.request(
                "POST", "/v1/orders/\(id)/reports", token: apps.rider.token, #"{"category":"fare","text":"Charged twice?"}"#,
                headers: reportKey)
            let fareAgain = try await gateway.request(
                "POST", "/v1/orders/\(id)/reports", token: apps.rider.token, #"{"category":"fare","text":"Charged twice?"}"#,
                headers: reportKey)
            #expect(fareAgain.status == 201 && fareAgain.body == fare.body, "\(fareAgain)")
            #expect(fare.status == 201 && fare.body["status"] == "open" && fare.body["reporter_id"] == .string(apps.rider.id), "\(fare)")
            guard let fareID = fare.body["id"]?.stringValue else { throw TestFailure("no report: \(fare)") }
            for (body, status) in [
                (#"{"category":"weather","text":"x"}"#, 422), (#"{"category":"fare","text":"   "}"#, 422), (#"{"category":"fare"}"#, 422),
                (#"{"category":"fare","text":"x","photo_url":"http://elsewhere/x.png"}"#, 422),
            ] {
                let reply = try await gateway.request("POST", "/v1/orders/\(id)/reports", token: apps.rider.token, body)
                #expect(reply.status == status, "\(body): \(reply)")
            }
            let stranger = try await gateway.signUp(
                #"{"role":"rider","name":"Sam","phone_number":"+380501110019","password":"secret123"}"#, phone: "+380501110019",
                password: "secret123")
            #expect(
                try await gateway.request("POST", "/v1/orders/\(id)/reports", token: stranger.token, #"{"category":"other","text":"hi"}"#)
                    .status == 403)
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/reports", #"{"category":"other","text":"hi"}"#).status == 401)
            #expect(try await gateway.request("GET", "/dashboard/reports").status == 401, "operators only")

            // Listed for operators with the ride and its statuses over time.
            let listed = try await gateway.request("GET", "/dashboard/reports?status=open", headers: Self.basic)
            let reports = listed.body["reports"]?.arrayValue ?? []
            #expect(reports.count == 1 && reports.first?["report"]?["id"] == .string(fareID), "only the accepted report: \(listed)")
            let timeline = reports.first?["timeline"]?.arrayValue?.compactMap { $0["status"]?.stringValue } ?? []
            #expect(timeline == GatewayIntegrationTests.allStatuses, "every status the ride went through, in order: \(timeline)")
            #expect(reports.first?["order"]?["id"] == .string(id))
            try await eventually("the ride is paid", timeout: .seconds(30)) {
                try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["payment"] == "paid"
            }
            let dom = try await HeadlessBrowser.dom("http://ridesharing:sk_dev_ridesharing@127.0.0.1:\(gateway.port)/dashboard?auth=basic")
            #expect(
                dom.contains(#"data-report="\#(fareID)" data-report-status="open""#) && dom.contains(#"data-stamp="COMPLETED""#),
                "\(dom.suffix(3000))")
            #expect(
                dom.contains(#"data-payment="paid""#) && dom.contains(#"data-refund="\#(id)""#),
                "a paid ride's refund button: \(dom.suffix(3000))")

            // Answered once (a retry with its Idempotency-Key gets the same reply); the rider's inbox has it.
            let keyed = Self.basic.merging(["Idempotency-Key": "answer-\(UUID().uuidString)"]) { $1 }
            let answered = try await gateway.request(
                "POST", "/dashboard/reports/\(fareID)/answer", #"{"answer":"Refunded the second charge."}"#, headers: keyed)
            #expect(answered.status == 200 && answered.body["status"] == "answered", "\(answered)")
            let retried = try await gateway.request(
                "POST", "/dashboard/reports/\(fareID)/answer", #"{"answer":"Refunded the second charge."}"#, headers: keyed)
            #expect(retried.status == 200 && retried.body == answered.body, "\(retried)")
            #expect(
                try await gateway.request("POST", "/dashboard/reports/\(fareID)/answer", #"{"answer":"again"}"#, headers: Self.basic).status
                    == 409)
            #expect(
                try await gateway.request("POST", "/dashboard/reports/rp-nope/answer", #"{"answer":"x"}"#, headers: Self.basic).status
                    == 404)
            try await eventually("the rider is told the answer", timeout: .seconds(30)) {
                let inbox = try await gateway.request("GET", "/v1/notifications", token: apps.rider.token)
                return inbox.body["notifications"]?.arrayValue?.contains {
                    $0["kind"] == "report_answered" && $0["body"] == "Refunded the second charge."
                } == true
            }

            // A lost item after the ride: the chat opens again, the report is in it for both.
            #expect(
                try await gateway.request("POST", "/v1/orders/\(id)/messages", token: apps.rider.token, #"{"text":"hello?"}"#).status
                    == 409, "closed after the ride")
            let lost = try await gateway.request(
                "POST", "/v1/orders/\(id)/reports", token: apps.rider.token,
                #"{"category":"lost_item","text":"Blue umbrella on the back seat"}"#)
            #expect(lost.status == 201, "\(lost)")
            for token in [apps.rider.token, apps.driver.token] {
                let chat = try await gateway.request("GET", "/v1/orders/\(id)/messages", token: token)
                #expect(chat.body["open"] == true, "\(chat)")
                #expect(chat.body["messages"]?.arrayValue?.last?["text"] == "Lost item reported: Blue umbrella on the back seat", "\(chat)")
            }
            let reply = try await gateway.request(
                "POST", "/v1/orders/\(id)/messages", token: apps.driver.token, #"{"text":"Found it, I can bring it by."}"#)
            #expect(reply.status == 201, "the driver answers in the reopened chat: \(reply)")
            try await eventually("the driver is told of the lost item", timeout: .seconds(30)) {
                let inbox = try await gateway.request("GET", "/v1/notifications", token: apps.driver.token)
                return inbox.body["notifications"]?.arrayValue?.contains {
                    $0["kind"] == "chat_message" && $0["body"] == "Lost item reported: Blue umbrella on the back seat"
                }
                    == true
            }
        }
    }
}
