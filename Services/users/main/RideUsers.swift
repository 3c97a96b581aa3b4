import ServiceKit
import UsersService

/// `ride-users`: everything lives in UsersService; this is the process entry point.
@main enum RideUsers {
    static func main() async {
        await RideUsersCommand.main()
    }
}
