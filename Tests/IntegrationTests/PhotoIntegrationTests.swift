import Foundation
import PlatformLauncher
import TestProcess
import Testing
import Wire

/// Profile and car photos through the real gateway and users service: uploaded as the raw body,
/// judged by their bytes, stored by their hash, served with caching, shown to the rider (the
/// order's driver), on the share page and in the dashboard; bad uploads refused, nothing stored.
@Suite(.serialized) struct PhotoIntegrationTests {
    /// A real 4×3 PNG.
    static let png = [UInt8](
        Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAEElEQVR4nGP4z8AARww4OQD1MQv1NXv7ggAAAABJRU5ErkJggg==")!)
    /// A real 32×24 baseline JPEG.
    static let jpeg = [UInt8](Data(base64Encoded: PhotoFixtures.baselineJPEG)!)
    /// 8 KB of HTML with a script.
    static let page = Array(
        ("<html><script>fetch('/v1/me')</script>" + String(repeating: "<p>lorem ipsum</p>", count: 460) + "</html>").utf8)

    static func put(
        _ gateway: TestGateway, _ path: String, token: String, _ body: [UInt8], type: String = "image/png", headers: [String: String] = [:]
    ) async throws -> (status: Int, body: JSONValue) {
        let response = try await HTTPProbe.send(
            "PUT", gateway.base + path, headers: headers.merging(["Authorization": "Bearer \(token)", "Content-Type": type]) { $1 },
            body: body,
            timeout: .seconds(60))
        return (response.status, (try? JSONCoding.decode(JSONValue.self, from: Array(response.body))) ?? .null)
    }

    static func sha256(_ text: String) async throws -> String {
        let (status, out, err) = try await runCommand("/usr/bin/sha256sum", [], stdin: text)
        guard status == 0, let hash = out.split(separator: " ").first else { throw TestFailure("sha256sum: \(err)") }
        return String(hash)
    }

    @Test func photosAreUploadedServedCachedAndShownAndBadOnesAreRefusedWithNothingStored() async throws {
        try await withTestBus("photos") { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway
            // Uploads: the type is the bytes' (the JPEG sent as image/png is a JPEG).
            let face = try await Self.put(gateway, "/v1/me/photo", token: apps.driver.token, Self.png, type: "application/octet-stream")
            #expect(face.status == 200, "\(face)")
            guard let faceURL = face.body["photo_url"]?.stringValue, faceURL.wholeMatch(of: /\/v1\/photos\/[0-9a-f]{64}/) != nil else {
                throw TestFailure("no photo_url: \(face)")
            }
            let car = try await Self.put(gateway, "/v1/me/car/photo", token: apps.driver.token, Self.jpeg)
            guard let carURL = car.body["car"]?["photo_url"]?.stringValue else { throw TestFailure("no car.photo_url: \(car)") }
            #expect(car.body["photo_url"] == .string(faceURL) && car.body["car"]?["model"] == "Prius", "\(car.body)")
            let me = try await gateway.request("GET", "/v1/me", token: apps.driver.token)
            #expect(
                me.body["photo_url"] == .string(faceURL) && me.body["car"]?["photo_url"] == .string(carURL),
                "the profile has both at once: \(me.body)")

            // Served to anyone, cached for good, 304 for the copy the client has.
            let served = try await HTTPProbe.send("GET", gateway.base + faceURL, timeout: .seconds(30))
            #expect(served.status == 200 && [UInt8](served.body) == Self.png)
            #expect(served.headers["content-type"] == "image/png")
            #expect(served.headers["cache-control"] == "public, max-age=31536000, immutable")
            let etag = try #require(served.headers["etag"])
            #expect(etag == "\"\(faceURL.split(separator: "/").last!)\"")
            let again = try await HTTPProbe.send("GET", gateway.base + faceURL, headers: ["If-None-Match": etag], timeout: .seconds(30))
            #expect(again.status == 304 && again.body.isEmpty && again.headers["etag"] == etag, "\(again.status)")
            let carServed = try await HTTPProbe.send("GET", gateway.base + carURL, timeout: .seconds(30))
            #expect(carServed.status == 200 && carServed.headers["content-type"] == "image/jpeg" && [UInt8](carServed.body) == Self.jpeg)
            #expect(try await gateway.request("GET", "/v1/photos/" + String(repeating: "0", count: 64)).status == 404)
            #expect(try await gateway.request("GET", "/v1/photos/not-a-hash").status == 404)

            // Bad uploads: a clear 4xx, the profile as it was, the bytes not stored.
            let fake = "just text, named photo.png"
            let refused: [([UInt8], String, Int, String)] = [
                (Array(fake.utf8), "/v1/me/photo", 415, "unsupported_image"),
                (Array("GIF89a\u{01}\u{00}\u{01}\u{00}".utf8), "/v1/me/photo", 415, "unsupported_image"),
                (Array(Self.png.prefix(20)), "/v1/me/photo", 422, "invalid_image"),
                // Issue 38: a page behind an image's header, or behind a whole image, is no photo.
                (Array(Self.png.prefix(33)) + Self.page, "/v1/me/photo", 422, "invalid_image"),
                (Self.png + Self.page, "/v1/me/photo", 422, "invalid_image"),
                (Self.jpeg + Self.page, "/v1/me/car/photo", 422, "invalid_image"),
                ([], "/v1/me/photo", 422, "invalid_image"),
                (Self.png + [UInt8](repeating: 0, count: 5 * 1024 * 1024), "/v1/me/car/photo", 413, "too_large"),
            ]
            for (body, path, status, code) in refused {
                let reply = try await Self.put(gateway, path, token: apps.driver.token, body)
                #expect(reply.status == status && reply.body["error"]?["code"] == .string(code), "\(body.count) bytes to \(path): \(reply)")
            }
            let fakeHash = try await Self.sha256(fake)
            #expect(try await gateway.request("GET", "/v1/photos/\(fakeHash)").status == 404, "the fake image was not stored")
            let riderCar = try await Self.put(gateway, "/v1/me/car/photo", token: apps.rider.token, Self.png)
            #expect(riderCar.status == 409 && riderCar.body["error"]?["code"] == "no_car", "\(riderCar)")
            #expect(try await Self.put(gateway, "/v1/me/photo", token: "not-a-token", Self.png).status == 401)
            let after = try await gateway.request("GET", "/v1/me", token: apps.driver.token)
            #expect(
                after.body["photo_url"] == .string(faceURL) && after.body["car"]?["photo_url"] == .string(carURL),
                "unchanged: \(after.body)")
            #expect(try await gateway.request("GET", "/v1/me", token: apps.rider.token).body["photo_url"] == nil)
            // A retry with the same Idempotency-Key answers the first reply; the key with another image is refused.
            let key = ["Idempotency-Key": "photo-\(UUID().uuidString)"]
            let first = try await Self.put(gateway, "/v1/me/photo", token: apps.rider.token, Self.jpeg, headers: key)
            let retry = try await Self.put(gateway, "/v1/me/photo", token: apps.rider.token, Self.jpeg, headers: key)
            #expect(first.status == 200 && retry.status == 200 && retry.body == first.body, "\(first) then \(retry)")
            let reused = try await Self.put(gateway, "/v1/me/photo", token: apps.rider.token, Self.png, headers: key)
            #expect(reused.status == 422 && reused.body["error"]?["code"] == "idempotency_key_reused", "\(reused)")

            // Shown: the rider's order has the driver's photos; the share page and the dashboard show them.
            let id = try await apps.bookAndAccept()
            let order = try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token)
            #expect(
                order.body["driver"]?["photo_url"] == .string(faceURL) && order.body["driver"]?["car"]?["photo_url"] == .string(carURL),
                "\(order.body)")
            let link = try await gateway.request("GET", "/v1/orders/\(id)/share", token: apps.rider.token)
            guard let url = link.body["share_url"]?.stringValue, let shareID = link.body["share_id"]?.stringValue else {
                throw TestFailure("no share link: \(link)")
            }
            let shared = try await gateway.request("GET", "/v1/ride-shares/\(shareID)")
            #expect(shared.body["ride"]?["driver"]?["photo_url"] == .string(faceURL), "\(shared.body)")
            try await eventually("the share page shows the driver's and the car's photos", timeout: .seconds(60)) {
                let dom = try await HeadlessBrowser.dom(url)
                return HeadlessBrowser.attribute("src", of: "driver-photo", in: dom) == faceURL
                    && HeadlessBrowser.attribute("src", of: "car-photo", in: dom) == carURL
            }
            try await eventually("the dashboard shows the driver's photo", timeout: .seconds(60)) {
                let dom = try await HeadlessBrowser.dom(
                    "http://ridesharing:sk_dev_ridesharing@127.0.0.1:\(gateway.port)/dashboard?auth=basic")
                return dom.contains(#"data-order="\#(id)""#) && dom.contains(#"src="\#(faceURL)""#)
            }
        }
    }

    /// Issue 38: a replaced photo no one else uses is deleted once its time is up (here at once);
    /// one another user still shows is kept.
    @Test func aReplacedPhotoIsDeletedUnlessSomeoneStillShowsIt() async throws {
        try await withTestBus("photos-replaced") { bus in
            _ = try await TestService.users(on: bus, arguments: ["--replaced-photo-retention-s", "0"])
            let gateway = try await TestGateway.start(on: bus)
            let ann = try await gateway.signUp(
                #"{"role":"rider","name":"Ann","phone_number":"+380501110071","password":"secret123"}"#, phone: "+380501110071",
                password: "secret123")
            let bob = try await gateway.signUp(
                #"{"role":"rider","name":"Bob","phone_number":"+380501110072","password":"secret456"}"#, phone: "+380501110072",
                password: "secret456")
            func photo(of reply: (status: Int, body: JSONValue)) throws -> String {
                guard reply.status == 200, let url = reply.body["photo_url"]?.stringValue else { throw TestFailure("upload: \(reply)") }
                return url
            }
            func served(_ url: String) async throws -> Int {
                try await HTTPProbe.send("GET", gateway.base + url, timeout: .seconds(30)).status
            }
            let png = try photo(of: try await Self.put(gateway, "/v1/me/photo", token: ann.token, Self.png))
            #expect(
                try await photo(of: try await Self.put(gateway, "/v1/me/photo", token: bob.token, Self.png)) == png,
                "one row, both point at it")
            // Ann replaces hers: Bob still shows it, so it stays.
            let jpeg = try photo(of: try await Self.put(gateway, "/v1/me/photo", token: ann.token, Self.jpeg))
            #expect(try await served(png) == 200, "Bob's photo is still served")
            // Bob replaces his too: no one shows it any more, and it is gone.
            #expect(try await photo(of: try await Self.put(gateway, "/v1/me/photo", token: bob.token, Self.jpeg)) == jpeg)
            #expect(try await served(png) == 404, "the replaced photo no one shows is deleted")
            #expect(try await served(jpeg) == 200)
            // Back to a deleted one: stored again, served again.
            #expect(try await photo(of: try await Self.put(gateway, "/v1/me/photo", token: ann.token, Self.png)) == png)
            let (pngServed, jpegServed) = (try await served(png), try await served(jpeg))
            #expect(pngServed == 200 && jpegServed == 200, "Bob still shows the JPEG")
        }
    }
}
