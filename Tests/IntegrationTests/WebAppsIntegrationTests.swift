import Bus
import Foundation
import PlatformLauncher
import Testing
import Wire

/// The rider and the driver app in a real browser (headless Chromium over the DevTools protocol),
/// against real processes: a person signs up in each tab and takes a whole ride by clicking —
/// book, offer, accept, drive, arrive, start, end, chat, share, pay, rate, history, earnings.
/// The pages run under their content security policy (nothing inline) and pass accessibility
/// basics. On a failure both tabs' screenshots are kept (the failure names where).
@Suite(.serialized, .timeLimit(.minutes(8))) struct WebAppsIntegrationTests {
    @Test func aRideIsTakenByClickingThroughTheRiderAndTheDriverApp() async throws {
        try await withTestBus("web-apps") { bus in
            let gateway = try await Self.platform(bus, cards: true)
            let base = "http://127.0.0.1:\(gateway.port)"

            // The pages' policy: scripts and styles from the gateway only, nothing inline.
            let page = try await HTTPProbe.send("GET", base + "/app/rider", headers: [:], body: nil, timeout: .seconds(10))
            let policy = page.headers["content-security-policy"] ?? ""
            #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"), "\(policy)")

            let screenshots = ProcessInfo.processInfo.environment["RIDE_SCREENSHOTS"]
            let (browser, rider, driver) = try await Self.twoApps(base, name: "web-apps") { rider, driver in
                try await takeARide(rider: rider, driver: driver, origin: base, screenshots: screenshots)
            }
            for (name, tab) in [("rider", rider), ("driver", driver)] {
                #expect(Self.problems(of: tab).isEmpty, "the \(name) app logged: \(Self.problems(of: tab))")
                #expect(try await tab.evaluate(Self.accessibility) == [], "the \(name) app's accessibility")
                tab.close()
            }
            await browser.close()
        }
    }

    /// What goes wrong is said in words, and the apps go on: the browser's location refused, the
    /// connection lost while booking, an offer gone by the time it is accepted, a session ended
    /// elsewhere (a new password).
    @Test func whatGoesWrongIsSaidInWordsAndTheAppsRecover() async throws {
        try await withTestBus("web-apps-wrong") { bus in
            let gateway = try await Self.platform(bus)
            let base = "http://127.0.0.1:\(gateway.port)"
            let (browser, rider, driver) = try await Self.twoApps(base, name: "web-apps-wrong") { rider, driver in
                try await goWrong(rider: rider, driver: driver, gateway: gateway, origin: base)
            }
            defer {
                rider.close()
                driver.close()
            }
            #expect(
                Self.problems(of: rider).isEmpty && Self.problems(of: driver).isEmpty,
                "\(Self.problems(of: rider)) \(Self.problems(of: driver))")
            await browser.close()
        }
    }

    func goWrong(rider: DevToolsPage, driver: DevToolsPage, gateway: TestGateway, origin: String) async throws {
        let notice = { (text: String) in #"document.getElementById("notice").textContent.includes(\#(DevToolsPage.quoted(text)))"# }
        try await driver.waitFor("the driver app's scripts run", #"typeof state === "object" && typeof App === "object""#)
        try await driver.send(
            "Browser.setPermission", ["permission": ["name": "geolocation"], "setting": "denied", "origin": .string(origin)])
        for (field, value) in [("#phone", "+358401230011"), ("#password", "driving99"), ("#name", "Dora")] {
            try await driver.type(field, value)
        }
        try await driver.click("#sign-up")
        try await driver.waitFor("the driver is signed in", #"!document.getElementById("app").hidden"#)
        try await driver.click("#gps")
        try await driver.waitFor("a refused location is said", notice("Location refused"))
        try await driver.click("#online")
        try await driver.waitFor("the driver is online", notice("online"))
        // A reload keeps the session and shows the driver online, as tracking has it.
        try await driver.evaluate("window.beforeReload = 1")
        try await driver.send("Page.reload", [:])
        try await driver.waitFor(
            "the driver app is back",
            #"typeof window.beforeReload === "undefined" && typeof state === "object" && !document.getElementById("app").hidden"#)
        try await driver.waitFor("still online after the reload", #"document.getElementById("online").checked && state.online"#)

        try await rider.waitFor("the rider app's scripts run", #"typeof state === "object" && typeof App === "object""#)
        for (field, value) in [("#phone", "+358401230012"), ("#password", "riding999"), ("#name", "Rita")] {
            try await rider.type(field, value)
        }
        try await rider.click("#sign-up")
        try await rider.waitFor("the driver's car shows nearby", #"document.getElementById("cars").textContent.includes("1 car nearby")"#)
        try await rider.evaluate(
            #"(() => { setDropoff({latitude: state.pickup[0] + 0.004, longitude: state.pickup[1] + 0.004}); return 1; })()"#)
        // The connection drops while booking: said, nothing booked; once back, the booking goes through.
        try await rider.send("Network.enable")
        try await rider.send(
            "Network.emulateNetworkConditions", ["offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1])
        try await rider.click("#book")
        try await rider.waitFor("a lost connection is said", notice("cannot be reached"))
        try await rider.send(
            "Network.emulateNetworkConditions", ["offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1])
        try await rider.click("#book")
        try await rider.waitFor(
            "the ride is booked once back online", #"document.getElementById("status").textContent.includes("Finding a driver")"#)

        // The offer shown, then cancelled by the rider before the driver accepts it.
        try await driver.waitFor("the offer", #"document.querySelector(".offer button.accept")"#)
        try await driver.evaluate(#"(() => { window.staleAccept = document.querySelector(".offer button.accept"); return 1; })()"#)
        try await rider.click("#cancel")
        try await rider.waitFor("the ride is cancelled", #"document.getElementById("status").textContent === "Ride cancelled""#)
        try await driver.evaluate("window.staleAccept.click()")
        try await driver.waitFor("an offer gone is said", notice("taken by another driver or cancelled"))
        #expect(try await driver.evaluate("state.order") == .null, "the driver took nothing")

        // A new password elsewhere ends this session: the app says so and asks to log in again.
        let token = try #require(try await driver.evaluate("App.session.token").stringValue)
        let changed = try await gateway.request(
            "PATCH", "/v1/me", token: token, #"{"password":"another-pass9","current_password":"driving99"}"#)
        #expect(changed.status == 200, "\(changed.body)")
        try await driver.waitFor("the ended session is said", notice("session ended"), timeout: .seconds(40))
        #expect(try await driver.evaluate(#"!document.getElementById("sign-in").hidden"#) == true)
    }

    /// Chromium with the driver app and the rider app in two tabs, going through `steps`; when a
    /// step fails, both tabs' screenshots are kept and the failure names them.
    static func twoApps(
        _ base: String, name: String, _ steps: (_ rider: DevToolsPage, _ driver: DevToolsPage) async throws -> Void
    ) async throws -> (DevToolsBrowser, rider: DevToolsPage, driver: DevToolsPage) {
        let browser = try await DevToolsBrowser.launch(name: name)
        let driver = try await browser.open(base + "/app/driver")
        let rider = try await browser.open(base + "/app/rider")
        do {
            try await steps(rider, driver)
        } catch {
            let kept = try makeScratchDirectory("\(name)-failed")
            try? await rider.screenshot(to: "\(kept)/rider.png")
            try? await driver.screenshot(to: "\(kept)/driver.png")
            rider.close()
            driver.close()
            await browser.close()
            throw TestFailure("\(error) — the tabs' screenshots: \(kept)/rider.png, \(kept)/driver.png")
        }
        return (browser, rider, driver)
    }

    /// Every process a rider's and a driver's app reach, and the gateway; with `cards`, orders
    /// charges through the fake Stripe (`ridectl fake-stripe`, whose card page the rider opens).
    static func platform(_ bus: TestBus, cards: Bool = false) async throws -> TestGateway {
        let provider = cards ? try PaymentsIntegrationTests.stripeOrders(bus) : nil
        _ = try await TestService.users(on: bus)
        _ = try await TestTracking.start(on: bus, inactiveAfterSeconds: 60, deviceCredentials: true)
        _ = try await TestService.trips(on: bus)
        _ = try await TestService.start(
            on: bus, service: BusContract.Service.orders, executable: "ride-orders", arguments: provider?.orders ?? [])
        let gateway = try await TestGateway.start(on: bus)
        if let provider { try await PaymentsIntegrationTests.startFake(bus, at: provider.fake, gateway: gateway.base) }
        return gateway
    }

    /// The rider adds a card on the provider's page (leaving the app, typing the card there) and
    /// is back in the app with the card listed.
    func addCard(_ rider: DevToolsPage, number: String, listed last4: String) async throws {
        try await rider.click("#add-card")
        try await rider.waitFor(
            "the provider's card page", #"location.pathname.startsWith("/checkout/") && document.getElementById("number")"#)
        try await rider.type("#number", "4242 4242 4242 4241")
        try await rider.type("#expiry", "12 / 34")
        try await rider.type("#cvc", "123")
        try await rider.click("#save")
        try await rider.waitFor(
            "a wrong number is said on the provider's page",
            #"document.querySelector("[role=alert]") && document.querySelector("[role=alert]").textContent.includes("invalid")"#)
        try await rider.type("#number", number)
        try await rider.type("#expiry", "12 / 34")
        try await rider.type("#cvc", "123")
        try await rider.click("#save")
        let listed = #"document.getElementById("cards").textContent.includes("·\#(last4)")"#
        try await rider.waitFor(
            "back in the app with the card listed", #"location.pathname === "/app/rider" && typeof App === "object" && "# + listed)
        try await rider.waitFor("the card is said to be saved", #"document.getElementById("notice").textContent.includes("card is saved")"#)
    }

    /// What a page logged, but for refusals the apps handle and say in words (a route asked before
    /// its trip exists, a lost connection, the missing icon).
    static func problems(of page: DevToolsPage) -> [String] {
        page.problems.filter { !$0.contains("Failed to load resource") && !$0.contains("ERR_INTERNET_DISCONNECTED") }
    }

    func takeARide(rider: DevToolsPage, driver: DevToolsPage, origin: String, screenshots: String?) async throws {
        let signedIn = #"!document.getElementById("app").hidden"#
        // The driver signs up with their car, starts 550 m south of the city's centre (the
        // browser's geolocation) and goes online.
        try await driver.waitFor("the driver app's scripts run", #"typeof state === "object" && typeof App === "object""#)
        let centre = try await driver.evaluate("App.centre()").arrayValue?.compactMap(\.numberValue) ?? []
        try await driver.send("Browser.grantPermissions", ["permissions": ["geolocation"], "origin": .string(origin)])
        try await driver.send(
            "Emulation.setGeolocationOverride", ["latitude": .number(centre[0] - 0.005), "longitude": .number(centre[1]), "accuracy": 5])
        let signUp = [("#phone", "+358401230001"), ("#password", "driving99"), ("#name", "Dana")]
        for (field, value) in signUp + [
            ("#car-make", "Toyota"), ("#car-model", "Prius"), ("#car-color", "white"), ("#car-plate", "WEB-123"),
        ] {
            try await driver.type(field, value)
        }
        try await driver.click("#sign-up")
        try await driver.waitFor("the driver is signed in", signedIn)
        try await driver.click("#gps")
        try await driver.waitFor("the browser's position is used", "Math.abs(state.position[0] - \(centre[0] - 0.005)) < 1e-6")
        try await driver.click("#gps")  // from here the car drives along its routes
        try await driver.click("#online")
        try await driver.waitFor("the driver is online", #"document.getElementById("notice").textContent.includes("online")"#)

        // The rider signs up, logs out, and logs in again with the keyboard only.
        try await rider.waitFor("the rider app's scripts run", #"typeof state === "object" && typeof App === "object""#)
        for (field, value) in [("#phone", "+358401230002"), ("#password", "riding999"), ("#name", "Riina")] {
            try await rider.type(field, value)
        }
        try await rider.click("#sign-up")
        try await rider.waitFor("the rider is signed in", signedIn)
        try await rider.click("#log-out")
        try await rider.waitFor("the rider is signed out", #"!document.getElementById("sign-in").hidden"#)
        try await rider.evaluate("document.activeElement.blur()")
        try await key(rider, "Tab")
        #expect(try await rider.evaluate("document.activeElement.id") == "phone", "Tab reaches the phone number first")
        try await rider.send("Input.insertText", ["text": "+358401230002"])
        try await key(rider, "Tab")
        try await rider.send("Input.insertText", ["text": "riding999"])
        try await key(rider, "Enter")
        try await rider.waitFor("the rider logs in by keyboard", signedIn)

        // A card on the provider's page: one that is saved but declined when charged.
        try await addCard(rider, number: "4000 0000 0000 0002", listed: "0002")

        // Cars nearby, a place search, then the drop-off tapped on the map: a quote; book.
        try await rider.waitFor("the driver's car shows nearby", #"document.getElementById("cars").textContent.includes("1 car nearby")"#)
        try await rider.type("#search", "Mannerheimintie")
        try await rider.waitFor("the search finds places", ##"document.querySelectorAll("#results button").length > 0"##)
        let box = try await rider.evaluate(
            #"(() => { const r = document.getElementById("map").getBoundingClientRect(); return [r.left + r.width * 0.72, r.top + r.height * 0.3]; })()"#
        )
        let xy = box.arrayValue?.compactMap(\.numberValue) ?? []
        for type in ["mousePressed", "mouseReleased"] {
            try await rider.send(
                "Input.dispatchMouseEvent",
                ["type": .string(type), "x": .number(xy[0]), "y": .number(xy[1]), "button": "left", "clickCount": 1])
        }
        try await rider.waitFor(
            "a quote for the drop-off", #"/\d+\.\d\d [A-Z]{3} · .* km/.test(document.getElementById("quote").textContent)"#)
        try await rider.click("#book")
        try await rider.waitFor("the ride is booked", #"document.getElementById("status").textContent.includes("Finding a driver")"#)

        // The offer reaches the driver, who accepts and drives to the pickup along the route.
        try await driver.click(".offer button.accept")
        try await driver.waitFor(
            "the way to the pickup, turn by turn", ##"document.querySelectorAll("#steps li").length > 0"##, timeout: .seconds(60))
        try await rider.waitFor(
            "the rider sees the driver coming",
            #"document.getElementById("driver").textContent.includes("Dana") && document.getElementById("driver-marker")"#)
        let shownDriver = try await rider.text("#driver")
        #expect(
            shownDriver == "Dana · white Toyota Prius · WEB-123",
            "the car the rider looks for, make, model, colour and plate: \(shownDriver)")
        if let screenshots {
            try await rider.screenshot(to: "\(screenshots)/rider-app.png")
            try await driver.screenshot(to: "\(screenshots)/driver-app.png")
        }
        try await chat(rider, "I am by the door", to: driver)
        try await chat(driver, "Two minutes", to: rider)
        try await rider.click("#share")
        try await rider.waitFor("a share link", #"document.getElementById("share-link").textContent.includes("/ride/")"#)
        // From here every fix goes over the live socket under the device credential: count the posted ones.
        try await driver.evaluate(
            #"(() => { window.posted = 0; const api = App.api; App.api = (m, path, ...rest) => { if (path.endsWith("/locations")) window.posted++; return api(m, path, ...rest); }; return 1; })()"#
        )
        try await drive(driver, until: "REACHED_PICKUP")
        try await driver.click("#start")
        try await driver.waitFor(
            "the way to the drop-off", ##"state.order.status === "DROPPING_OFF" && document.querySelectorAll("#steps li").length > 0"##,
            timeout: .seconds(60))
        try await drive(driver, until: "REACHED_DROPOFF")
        #expect(try await driver.evaluate("window.posted") == 0, "the drive's fixes went over the socket, none posted")
        try await driver.click("#end")

        // The rider's summary, payment and rating; the ride in their history, the driver's earnings.
        try await rider.waitFor("the ride is completed", #"document.getElementById("status").textContent === "Ride completed""#)
        try await rider.waitFor("the summary", #"document.getElementById("summary-text").textContent.includes("km")"#)
        // The card is refused: said, and paid again with another card added on the provider's page.
        try await rider.waitFor("the refused card is said", #"!document.getElementById("pay-again").hidden"#, timeout: .seconds(40))
        let refusal = try await rider.text("#payment")
        #expect(refusal.contains("declined"), "\(refusal)")
        try await addCard(rider, number: "4242 4242 4242 4242", listed: "4242")
        try await rider.waitFor(
            "the unpaid ride is shown again",
            #"!document.getElementById("pay-again").hidden && document.getElementById("summary-text").textContent.includes("km")"#)
        try await rider.click("#pay-again")
        try await rider.waitFor("the payment", #"document.getElementById("payment").textContent.startsWith("Paid")"#)
        #expect(try await rider.text("#payment").contains("by card"))
        try await rider.click(#"[data-stars="5"]"#)
        try await rider.waitFor("the rating is saved", #"document.getElementById("notice").textContent.includes("5 stars")"#)
        try await rider.click("#done")
        try await rider.waitFor("the ride in the history", #"document.getElementById("history").textContent.includes("COMPLETED")"#)
        try await driver.waitFor("the driver's earnings", #"document.getElementById("earnings").textContent.includes("1 ride,")"#)
    }

    /// The driver drives along the route shown until the order reaches `status` (the geofence
    /// fires on arrival; where it has not, the driver says so).
    func drive(_ driver: DevToolsPage, until status: String) async throws {
        try await driver.click("#drive")
        try await driver.waitFor("the car drives to the end of its route", "state.driving === null", timeout: .seconds(120))
        if try await driver.evaluate("state.order.status") != .string(status) {
            try await driver.click("#arrive")
        }
        try await driver.waitFor("the order is \(status)", "state.order.status === \(DevToolsPage.quoted(status))")
    }

    func chat(_ from: DevToolsPage, _ text: String, to other: DevToolsPage) async throws {
        try await from.type("#chat-text", text)
        try await from.click("#chat-form button")
        try await other.waitFor(
            "the message \"\(text)\" arrives", #"document.getElementById("messages").textContent.includes(\#(DevToolsPage.quoted(text)))"#)
    }

    func key(_ page: DevToolsPage, _ key: String) async throws {
        let code: JSONValue = key == "Tab" ? 9 : 13
        try await page.send(
            "Input.dispatchKeyEvent",
            [
                "type": "keyDown", "key": .string(key), "code": .string(key), "windowsVirtualKeyCode": code,
                "text": key == "Enter" ? "\r" : "",
            ])
        try await page.send(
            "Input.dispatchKeyEvent", ["type": "keyUp", "key": .string(key), "code": .string(key), "windowsVirtualKeyCode": code])
    }

    /// Accessibility basics: every field labelled, every button named, the language set, and each
    /// text shown at a contrast of at least 4.5:1 against its background (WCAG AA).
    static let accessibility = """
        (() => {
          const problems = [];
          for (const e of document.querySelectorAll("input, select, textarea")) if (!e.labels || !e.labels.length) problems.push("no label: #" + e.id);
          for (const b of document.querySelectorAll("button")) if (!(b.getAttribute("aria-label") || b.textContent.trim())) problems.push("unnamed button #" + b.id);
          if (!document.documentElement.lang) problems.push("no lang");
          const luminance = (colour) => {
            const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
            return 0.2126 * r + 0.7152 * g + 0.0722 * b;
          };
          const background = (e) => {
            for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor; if (c && c !== "transparent" && !c.startsWith("rgba(0, 0, 0, 0)")) return c; }
            return "rgb(255, 255, 255)";
          };
          for (const e of document.querySelectorAll("button, label, p, h1, h2, h3, li, span, a, legend, input")) {
            if (e.offsetParent === null || !(e.textContent.trim() || e.value)) continue;
            const [a, b] = [luminance(getComputedStyle(e).color), luminance(background(e))];
            const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
            if (ratio < 4.5) problems.push(`contrast ${ratio.toFixed(2)}: ${e.tagName.toLowerCase()}#${e.id} "${e.textContent.trim().slice(0, 30)}"`);
          }
          return problems;
        })()
        """
}
