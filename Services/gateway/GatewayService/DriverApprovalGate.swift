import Foundation
import RideContract
import RideModels

extension AppRoutes {
    /// A driver goes online only approved, with no document expired — read from users, the
    /// approval's owner, at the moment of asking (not from the token cache): `403 not_approved`
    /// saying what is missing.
    func requireApproval(_ userID: String) async throws {
        let user = try await platform.call(Ops.Users.get, ["id": .string(userID)]) as User
        if let problem = DriverApproval.problem(user, today: DriverApproval.day(Date())) {
            throw GatewayError(.forbidden, "not_approved", "not approved for shifts: \(problem)")
        }
    }
}
