import Testing

@testable import GatewayService

/// Social sign-in's flags and the name a new account gets.
@Suite struct IdentitySettingsTests {
    @Test func providersAreOffUntilTheirClientIDIsSet() throws {
        let none = try RideGatewayCommand.parse([]).settings().identity
        #expect(none == IdentitySettings() && none.summary == "none")
        let settings = try RideGatewayCommand.parse([
            "--apple-client-id", "com.example.app, com.example.web", "--google-client-id", "g1", "--google-issuer", "http://127.0.0.1:9/",
            "--facebook-app-id", "42", "--facebook-app-secret", "s",
        ]).settings().identity
        #expect(settings.apple == .init(issuer: IdentitySettings.appleIssuer, clientIDs: ["com.example.app", "com.example.web"]))
        #expect(settings.google == .init(issuer: "http://127.0.0.1:9", clientIDs: ["g1"]), "without the trailing slash")
        #expect(settings.facebook == .init(graphURL: IdentitySettings.graphURL, appID: "42", appSecret: "s"))
    }

    @Test func aBadProviderSettingStopsTheGatewayNamingIt() {
        for (arguments, named) in [
            (["--facebook-app-id", "42"], "facebook app secret"),
            (["--google-client-id", "g1", "--google-issuer", "accounts.google.com"], "--google-issuer"),
            (["--apple-client-id", " , "], "--apple-client-id"),
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try RideGatewayCommand.parse(arguments).settings() }
            do {
                _ = try RideGatewayCommand.parse(arguments).settings()
            } catch {
                #expect("\(error)".contains(named), "\(error)")
            }
        }
    }

    @Test func aNewAccountIsNamedByTheAppThenTheProviderThenItsRole() {
        #expect(IdentityRoutes.name("Ann", VerifiedIdentity(subject: "1", name: "Other"), role: .rider) == "Ann")
        #expect(IdentityRoutes.name(nil, VerifiedIdentity(subject: "1", name: " Bo\u{7} "), role: .rider) == "Bo")
        #expect(IdentityRoutes.name(nil, VerifiedIdentity(subject: "1", email: "cy@example.com"), role: .rider) == "cy")
        #expect(IdentityRoutes.name(nil, VerifiedIdentity(subject: "1"), role: .driver) == "Driver")
        #expect(
            IdentityRoutes.name(nil, VerifiedIdentity(subject: "1", name: String(repeating: "é", count: 300)), role: .rider).count == 100)
    }
}
