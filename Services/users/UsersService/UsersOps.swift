import Bus
import Foundation
import RideContract
import RideModels
import ServiceStorage
import Storage

/// The `users` service's ops on the broker.
enum UsersOps {
    /// The ops whose replies are credentials (tokens, a device's key): a keyed one is answered
    /// again only within `--credential-replay-s`.
    static let credentialOps = [
        Ops.Users.login.name, Ops.Users.refresh.name, Ops.Users.loginWithIdentity.name, Ops.Users.issueDeviceCredential.name,
    ]
    static let defaultCredentialReplay: TimeInterval = 60

    static func router(
        store: any UserStorage, hasher: PasswordHasher, sessions: SessionOps, relay: OutboxRelay, instance: String,
        reauthentication: Reauthentication = Reauthentication(window: Reauthentication.defaultWindow),
        keepReplacedPhotos: TimeInterval = PhotoOps.defaultKeepReplaced, approval: DriverApprovalMode = .automatic
    ) -> OpRouter {
        var router = OpRouter(service: BusContract.Service.users, instance: instance)
        let slow = SlowWork()
        let documents = DocumentOps(store: store, relay: relay, mode: approval)

        // Idempotent: the same registration again (a client's retry, or the gateway's call retried
        // on another replica after the first stored it but answered too late) answers 200 with the
        // user stored the first time. Only a different registration of the number is a conflict.
        @Sendable func earlier(_ params: RegisterParams, _ stored: (User, String)?) async throws -> User {
            guard let (user, hash) = stored else { throw phoneTaken(params.phoneNumber) }
            let same = user.role == params.role && user.name == params.name && user.deviceID == params.deviceID && user.car == params.car
            guard same, try await slow.run({ hasher.verify(params.password, against: hash) }) else { throw phoneTaken(params.phoneNumber) }
            return user
        }

        router.on(Ops.Users.register) { (params: RegisterParams, _) -> Replied<User> in
            // A car's photo comes from put_photo, never with a registration.
            let params = { (params: RegisterParams) in
                var params = params
                params.car?.photoURL = nil
                return params
            }(params)
            if let problem = UserRules.problem(with: params) { throw ServiceError.unprocessable("invalid_params", problem) }
            if let stored = try await store.credentials(phoneNumber: params.phoneNumber) {
                return Replied(status: Status.ok, body: try await earlier(params, stored))
            }
            let hash = try await slow.run { try hasher.hash(params.password) }
            let user = User(
                id: UserID.make(params.role), role: params.role, name: params.name, phoneNumber: params.phoneNumber,
                deviceID: params.deviceID, car: params.car, createdAt: Date())
            do {
                try await store.register(user, passwordHash: hash)
            } catch UserStoreFailure.phoneTaken {
                // Stored by another request meanwhile: read it now.
                return Replied(
                    status: Status.ok, body: try await earlier(params, try await store.credentials(phoneNumber: params.phoneNumber)))
            } catch UserStoreFailure.deviceTaken {
                throw deviceTaken(params.deviceID ?? "")
            }
            relay.notify()
            return Replied(status: Status.created, body: try await documents.registered(user))
        }

        router.on(Ops.Users.login) { (params: LoginParams, _) -> Session in
            let found = try await store.credentials(phoneNumber: params.phoneNumber)
            // An unknown phone number costs the same hash as a wrong password: timing tells nothing.
            let matches = try await slow.run { () -> Bool in
                guard let (_, hash) = found else {
                    _ = try? hasher.hash(params.password)
                    return false
                }
                return hasher.verify(params.password, against: hash)
            }
            guard matches, let (user, _) = found else {
                throw ServiceError.unauthorized("invalid_credentials", "phone number or password is wrong")
            }
            return try await sessions.start(for: user)
        }

        sessions.register(on: &router)
        DeviceCredentialOps(store: store, sessions: sessions).register(on: &router)
        SuspensionOps(store: store, relay: relay).register(on: &router)
        documents.register(on: &router)
        IdentityOps(
            store: store, sessions: sessions, relay: relay, reauthentication: reauthentication, hasher: hasher, slow: slow,
            documents: documents
        )
        .register(on: &router)

        router.on(Ops.Users.get) { (params: UserIDParams, _) -> User in
            guard let user = try await store.user(id: params.id) else { throw unknownUser(params.id) }
            return user
        }

        router.on(Ops.Users.update) { (params: UpdateUserParams, _) -> User in
            guard let current = try await store.user(id: params.id) else { throw unknownUser(params.id) }
            if let problem = UserRules.problem(with: params, role: current.role) {
                throw ServiceError.unprocessable("invalid_params", problem)
            }
            if params.needsCurrentPassword(of: current) {
                try await reauthentication.check(
                    params, of: current, hash: try await passwordHash(of: current, in: store), store: store, hasher: hasher, slow: slow)
            }
            let hash = try await params.password.asyncMap { password in try await slow.run { try hasher.hash(password) } }
            do {
                return try await store.update(params, passwordHash: hash, now: Date())
            } catch UserStoreFailure.phoneTaken {
                throw phoneTaken(params.phoneNumber ?? "")
            } catch UserStoreFailure.deviceTaken {
                throw deviceTaken(params.deviceID ?? "")
            } catch UserStoreFailure.unknownUser {
                throw unknownUser(params.id)
            }
        }

        // Saved places. The caller (the gateway) has authenticated the user and passes their id.
        router.on(Ops.Users.savePlace) { (params: SavePlaceParams, _) -> Replied<SavedPlace> in
            if let problem = UserRules.problem(with: params) { throw ServiceError.unprocessable("invalid_params", problem) }
            let place = SavedPlace(
                id: "pl-" + String(format: "%012llx", UInt64.random(in: 0..<(1 << 48))), userID: params.userID, label: params.label,
                name: params.name ?? params.label.rawValue, place: params.place, createdAt: Date())
            do {
                return Replied(status: Status.created, body: try await store.save(place))
            } catch UserStoreFailure.unknownUser {
                throw unknownUser(params.userID)
            } catch UserStoreFailure.tooManyPlaces(let count) {
                throw ServiceError.conflict(
                    "too_many_places", "user \(params.userID) has \(count) saved places, the most allowed; delete one first")
            }
        }
        router.on(Ops.Users.places) { (params: PlacesParams, _) -> SavedPlaces in
            SavedPlaces(places: try await store.places(userID: params.userID))
        }
        router.on(Ops.Users.deletePlace) { (params: PlacesParams, _) -> SavedPlaces in
            guard let id = params.id else { throw ServiceError.unprocessable("invalid_params", "id: required, the saved place to delete") }
            do {
                try await store.deletePlace(userID: params.userID, id: id)
            } catch UserStoreFailure.unknownPlace {
                throw ServiceError.notFound("unknown_place", "user \(params.userID.prefix(64)) has no saved place \(id.prefix(64))")
            }
            return SavedPlaces(places: try await store.places(userID: params.userID))
        }

        PhotoOps.register(on: &router, store: store, keepReplaced: keepReplacedPhotos)

        router.on(Ops.Users.events) { (query: EventsQuery, _) -> EventsPage in
            try await store.eventLog.page(source: BusContract.Service.users, query: query)
        }
        return router
    }

    static func phoneTaken(_ phone: String) -> ServiceError {
        ServiceError.conflict("phone_taken", "phone_number \(phone) is already registered")
    }

    /// A device belongs to one account: its phone's locations are that driver's.
    static func deviceTaken(_ deviceID: String) -> ServiceError {
        ServiceError.conflict("device_in_use", "device_id \(deviceID.prefix(128)) is another account's device")
    }

    /// The account's stored password hash, read by its own phone number; nil for an account
    /// without a password (social sign-in only).
    static func passwordHash(of user: User, in store: any UserStorage) async throws -> String? {
        let stored = user.phoneNumber.isEmpty ? nil : try await store.credentials(phoneNumber: user.phoneNumber)
        return stored.flatMap { $0.0.id == user.id && $0.1 != IdentityTable.noPassword ? $0.1 : nil }
    }

    static func unknownUser(_ id: String) -> ServiceError {
        ServiceError.notFound("unknown_user", "no user with id \(id)")
    }
}

/// User ids: the role's letter and 16 random hex digits (`r-…`, `d-…`), readable in logs.
enum UserID {
    static func make(_ role: UserRole) -> String {
        var generator = SystemRandomNumberGenerator()
        return (role == .rider ? "r-" : "d-") + String(format: "%016llx", generator.next() as UInt64)
    }
}

/// Runs CPU-heavy work (password hashing: ~0.3 s) on Dispatch's threads, so it never holds the
/// worker's socket thread or the two-thread cooperative pool.
struct SlowWork: Sendable {
    private let queue = DispatchQueue(label: "ride-users.hashing", attributes: .concurrent)

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
