import Foundation
import RideModels
import Testing

@testable import UsersService

@Suite struct TokenSignerTests {
    let old = Array(repeating: UInt8(7), count: 32)
    let new = Array(repeating: UInt8(8), count: 32)
    let user = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: Date(timeIntervalSince1970: 0))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aTokenSaysWhoWhichSessionAndUntilWhen() async throws {
        let signer = await TokenSigner(secret: old, lifetime: 900)
        let (token, expiresAt) = try await signer.issue(for: user, session: "s-1", now: now)
        #expect(token.split(separator: ".").count == 3)
        #expect(expiresAt == now.addingTimeInterval(900))
        let claims = try await signer.verify(token, now: now.addingTimeInterval(899)).get()
        #expect(claims.sub == "r-1" && claims.role == .rider && claims.sid == "s-1" && claims.iss == TokenSigner.issuer)
        #expect(await signer.verify(token, now: now.addingTimeInterval(900)) == .failure(.expired))
        #expect(try await signer.verifiedClaims(token).get().sid == "s-1", "log out accepts an expired token")
    }

    @Test func duringARotationTokensOfBothKeysVerifyAndNewOnesUseTheNewKey() async throws {
        let before = await TokenSigner(secret: old, lifetime: 900)
        let during = await TokenSigner(secret: new, previous: old, lifetime: 900)
        let after = await TokenSigner(secret: new, lifetime: 900)
        let (oldToken, _) = try await before.issue(for: user, session: "s-1", now: now)
        let (newToken, _) = try await during.issue(for: user, session: "s-1", now: now)
        #expect(try await during.verify(oldToken, now: now).get().sub == "r-1")
        #expect(try await during.verify(newToken, now: now).get().sub == "r-1")
        #expect(try await after.verify(newToken, now: now).get().sub == "r-1")
        #expect(await after.verify(oldToken, now: now) == .failure(.unknownKey), "the old key is gone once the rotation ends")
        #expect(await before.verify(newToken, now: now) == .failure(.unknownKey))
        #expect(during.currentKey == TokenSigner.keyID(new) && during.currentKey != TokenSigner.keyID(old))
    }

    @Test func forgedKidsSignaturesAndClaimsAreRefused() async throws {
        let signer = await TokenSigner(secret: old, lifetime: 900)
        let (token, _) = try await signer.issue(for: user, session: "s-1", now: now)
        let parts = token.split(separator: ".").map(String.init)
        // The same kid, another key's signature.
        let impostor = try await TokenSigner(secret: Array(repeating: 9, count: 32), lifetime: 900).issue(
            for: user, session: "s-1", now: now
        ).token
        let forgedHeader = Self.base64URL(#"{"alg":"HS256","kid":"\#(signer.currentKey)","typ":"JWT"}"#)
        let impostorParts = impostor.split(separator: ".").map(String.init)
        #expect(
            await signer.verify([forgedHeader, impostorParts[1], impostorParts[2]].joined(separator: "."), now: now)
                == .failure(.badSignature))
        // Claims changed to a driver, signature kept.
        let claims = Self.base64URL(#"{"exp":9999999999,"iat":0,"iss":"ride-users","role":"driver","sid":"s-1","sub":"d-1"}"#)
        #expect(await signer.verify([parts[0], claims, parts[2]].joined(separator: "."), now: now) == .failure(.badSignature))
        // A kid nobody holds, and none at all.
        let unknownKid = Self.base64URL(#"{"alg":"HS256","kid":"0011223344556677","typ":"JWT"}"#)
        #expect(await signer.verify([unknownKid, parts[1], parts[2]].joined(separator: "."), now: now) == .failure(.unknownKey))
        let noKid = Self.base64URL(#"{"alg":"HS256","typ":"JWT"}"#)
        #expect(await signer.verify([noKid, parts[1], parts[2]].joined(separator: "."), now: now).isFailure)
        // "alg": "none" with the signature dropped.
        let none = Self.base64URL(#"{"alg":"none","kid":"\#(signer.currentKey)"}"#)
        #expect(await signer.verify([none, parts[1], ""].joined(separator: "."), now: now).isFailure)
    }

    @Test func malformedTokensAreRefusedWithoutACrash() async {
        let signer = await TokenSigner(secret: old, lifetime: 900)
        let garbage = [
            "", ".", "..", "abc", "a.b", "a.b.c", "####.####.####", "eyJ.eyJ.sig", String(repeating: "A", count: 20_000) + ".A.A",
            Self.base64URL("[]") + "." + Self.base64URL("{}") + ".AA",
            Self.base64URL(#"{"alg":"HS256","kid":7}"#) + "." + Self.base64URL("null") + ".AA",
        ]
        for token in garbage {
            let result = await signer.verify(token, now: now)
            #expect(result.isFailure && result != .failure(.expired), "\(token.prefix(20))")
        }
    }

    @Test func refreshTokensNameTheirSessionAndParseOnlyWhenWellFormed() {
        let id = SessionID.make()
        let token = RefreshToken(session: id)
        #expect(RefreshToken(parsing: token.text) == token)
        #expect(token.hash.count == 64 && token.hash != RefreshToken(session: id).hash)
        for bad in [
            "", id, id + ".", "s-zz." + String(repeating: "a", count: 43), id + ".short", id + "." + String(repeating: "a", count: 300),
        ] {
            #expect(RefreshToken(parsing: bad) == nil, "\(bad.prefix(40))")
        }
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
