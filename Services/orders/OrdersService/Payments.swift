import Bus
import Foundation
import GRDB
import Logging
import PostgresNIO
import RideModels
import Storage

/// A charge to make: the rider pays `amountCents`; the driver's share and the platform's
/// commission are split in the provider's books. `idempotencyKey` (the order id) makes a
/// repeated charge return the first one's receipt, as card processors' idempotency keys do.
public struct ChargeRequest: Sendable, Equatable {
    public var idempotencyKey: String
    public var payerID: String
    public var payeeID: String
    public var currency: String
    public var amountCents: Int
    public var payeeShareCents: Int

    public init(idempotencyKey: String, payerID: String, payeeID: String, currency: String, amountCents: Int, payeeShareCents: Int) {
        self.idempotencyKey = idempotencyKey
        self.payerID = payerID
        self.payeeID = payeeID
        self.currency = currency
        self.amountCents = amountCents
        self.payeeShareCents = payeeShareCents
    }
}

public struct ChargeReceipt: Sendable, Equatable {
    public var reference: String
    public var capturedAt: Date

    public init(reference: String, capturedAt: Date) {
        self.reference = reference
        self.capturedAt = capturedAt
    }
}

/// Where the money goes: the seam for a real processor (Stripe, Adyen…); `LedgerPaymentProvider`
/// by default. A provider must be idempotent by `idempotencyKey`.
public protocol PaymentProvider: Sendable {
    var name: String { get }
    func charge(_ request: ChargeRequest) async throws -> ChargeReceipt
}

public enum PaymentError: Error, Equatable, CustomStringConvertible {
    /// The same key was charged before with different terms: never charge twice, never silently differ.
    case keyReused(String)

    public var description: String {
        switch self {
        case .keyReused(let key): "idempotency key \(key) was already charged with different terms"
        }
    }
}

/// The default provider: double-entry books in their own SQLite file (`ledger.sqlite`). Each
/// charge writes three entries that sum to zero — the rider's account is debited the fare, the
/// driver's credited their share, the platform's the commission.
/// The stand-in provider's books, readable (for tests and operators).
public protocol LedgerBooksProvider: PaymentProvider {
    /// An account's balance (`rider:<id>`, `driver:<id>`, `platform`), in cents.
    func balance(_ account: String) async throws -> Int
    /// How many charges the books hold.
    func chargeCount() async throws -> Int
}

public final class LedgerPaymentProvider: LedgerBooksProvider {
    public let name = "ledger"
    let database: DatabasePool

    /// Opened like every service database (WAL, a busy timeout): with several ride-orders
    /// instances, all of them charge each completed order at once, and one waits for the other.
    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: false)
    }

    static let migrations: [ServiceDatabase.Migration] = [
        (
            "v1",
            """
            CREATE TABLE charges (
                idempotency_key TEXT PRIMARY KEY NOT NULL,
                reference TEXT NOT NULL UNIQUE,
                currency TEXT NOT NULL,
                amount_cents INTEGER NOT NULL,
                payee_share_cents INTEGER NOT NULL,
                captured_at_ms INTEGER NOT NULL
            );
            CREATE TABLE entries (
                reference TEXT NOT NULL,
                account TEXT NOT NULL,
                amount_cents INTEGER NOT NULL
            );
            CREATE INDEX entries_by_account ON entries (account);
            """
        )
    ]

    public func charge(_ request: ChargeRequest) async throws -> ChargeReceipt {
        try await database.write { db in
            if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM charges WHERE idempotency_key = ?"), arguments: [request.idempotencyKey]) {
                return try LedgerBooks.repeated(request, stored: (row["currency"], row["amount_cents"], row["payee_share_cents"], row["reference"], row["captured_at_ms"]))
            }
            let (receipt, milliseconds) = LedgerBooks.newReceipt()
            try db.run(
                """
                INSERT INTO charges (idempotency_key, reference, currency, amount_cents, payee_share_cents, captured_at_ms) VALUES (?, ?, ?, ?, ?, ?)
                """, [request.idempotencyKey, receipt.reference, request.currency, request.amountCents, request.payeeShareCents, milliseconds])
            for (account, amount) in LedgerBooks.entries(of: request) {
                try db.run("INSERT INTO entries (reference, account, amount_cents) VALUES (?, ?, ?)", [receipt.reference, account, amount])
            }
            return receipt
        }
    }

    public func balance(_ account: String) async throws -> Int {
        try await database.read { db in try db.value(Int.self, "SELECT COALESCE(SUM(amount_cents), 0) FROM entries WHERE account = ?", [account]) ?? 0 }
    }

    public func chargeCount() async throws -> Int {
        try await database.read { db in try db.value(Int.self, "SELECT COUNT(*) FROM charges") ?? 0 }
    }
}

/// The books' rules, the same in either database.
enum LedgerBooks {
    /// A new receipt, its time in milliseconds as stored: a repeated charge returns exactly the first receipt.
    static func newReceipt() -> (ChargeReceipt, Int64) {
        let milliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        return (
            ChargeReceipt(reference: "ch-" + UUID().uuidString.lowercased().prefix(18), capturedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000)),
            milliseconds
        )
    }

    /// The three entries of a charge; they sum to zero.
    static func entries(of request: ChargeRequest) -> [(account: String, amount: Int)] {
        [
            ("rider:\(request.payerID)", -request.amountCents), ("driver:\(request.payeeID)", request.payeeShareCents),
            ("platform", request.amountCents - request.payeeShareCents),
        ]
    }

    /// The first charge under a key, returned again — or refused when the terms differ.
    static func repeated(_ request: ChargeRequest, stored: (currency: String, amount: Int, share: Int, reference: String, capturedAtMS: Int64)) throws -> ChargeReceipt {
        guard stored.amount == request.amountCents, stored.share == request.payeeShareCents, stored.currency == request.currency else {
            throw PaymentError.keyReused(request.idempotencyKey)
        }
        return ChargeReceipt(reference: stored.reference, capturedAt: Date(timeIntervalSince1970: Double(stored.capturedAtMS) / 1000))
    }
}

/// The ledger in PostgreSQL (schema `ledger`), when orders' state is there: one set of books for
/// every instance, as a card processor would be, so a charge retried by another instance is the
/// same charge.
public final class PostgresLedgerPaymentProvider: LedgerBooksProvider {
    public let name = "ledger"
    let postgres: PostgresSchema
    private let logger: Logger

    public static func open(url: PostgresURL, logger: Logger) async throws -> PostgresLedgerPaymentProvider {
        PostgresLedgerPaymentProvider(
            postgres: try await PostgresSchema.open(
                url: url, schema: "ledger", migrations: PostgresSchema.translated(LedgerPaymentProvider.migrations),
                outbox: false, logger: logger), logger: logger)
    }

    init(postgres: PostgresSchema, logger: Logger) {
        self.postgres = postgres
        self.logger = logger
    }

    public func charge(_ request: ChargeRequest) async throws -> ChargeReceipt {
        let logger = logger
        return try await postgres.write { connection in
            // Instances charging one order at once queue on its key's lock; the second finds the first's charge.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\("ledger." + request.idempotencyKey)))", logger: logger)
            if let row = try await connection.first(
                """
                SELECT currency, amount_cents, payee_share_cents, reference, captured_at_ms FROM charges WHERE idempotency_key = \(request.idempotencyKey)
                """, as: (String, Int, Int, String, Int64).self, logger: logger)
            {
                return try LedgerBooks.repeated(request, stored: row)
            }
            let (receipt, milliseconds) = LedgerBooks.newReceipt()
            try await connection.run(
                """
                INSERT INTO charges (idempotency_key, reference, currency, amount_cents, payee_share_cents, captured_at_ms)
                VALUES (\(request.idempotencyKey), \(receipt.reference), \(request.currency), \(request.amountCents), \(request.payeeShareCents), \(milliseconds))
                """, logger: logger)
            for (account, amount) in LedgerBooks.entries(of: request) {
                try await connection.run("INSERT INTO entries (reference, account, amount_cents) VALUES (\(receipt.reference), \(account), \(amount))", logger: logger)
            }
            return receipt
        }
    }

    public func balance(_ account: String) async throws -> Int {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first("SELECT COALESCE(SUM(amount_cents), 0)::BIGINT FROM entries WHERE account = \(account)", as: Int.self, logger: logger) ?? 0
        }
    }

    public func chargeCount() async throws -> Int {
        let logger = logger
        return try await postgres.read { connection in try await connection.first("SELECT COUNT(*) FROM charges", as: Int.self, logger: logger) ?? 0 }
    }
}

/// Charging a completed ride: the fare through the provider (keyed by the order id), then the
/// payment recorded with `order.paid` — once, however often it runs (the reactor retries it until
/// it succeeds; a crash between the charge and the record replays into the same receipt).
public struct PaymentCapture: Sendable {
    let store: any OrderStorage
    let provider: any PaymentProvider
    let commissionPercent: Int

    public init(store: any OrderStorage, provider: any PaymentProvider, commissionPercent: Int) {
        self.store = store
        self.provider = provider
        self.commissionPercent = commissionPercent
    }

    /// The driver's share of `amount` after the commission (the platform keeps the rounding).
    public static func driverShare(of amount: Int, commissionPercent: Int) -> Int {
        amount * (100 - commissionPercent) / 100
    }

    /// Charges `order` (COMPLETED, with a fare and a driver); nil when there is nothing to charge.
    @discardableResult
    public func capture(_ order: Order) async throws -> Payment? {
        guard order.status == .completed, let fare = order.fare, let driver = order.driver else { return nil }
        if let existing = try await store.payment(orderID: order.id) { return existing }
        let share = Self.driverShare(of: fare.totalCents, commissionPercent: commissionPercent)
        let receipt: ChargeReceipt
        do {
            receipt = try await provider.charge(
                ChargeRequest(
                    idempotencyKey: order.id, payerID: order.rider.id, payeeID: driver.id,
                    currency: fare.currency, amountCents: fare.totalCents, payeeShareCents: share))
        } catch let error as PaymentError {
            // Permanent (e.g. instances configured with different commissions): retrying cannot help; an operator must look.
            throw ServiceError.conflict("payment_refused", "order \(order.id): \(error)")
        }
        let payment = Payment(
            id: "pay-" + order.id, orderID: order.id, riderID: order.rider.id, driverID: driver.id, provider: provider.name,
            providerReference: receipt.reference, currency: fare.currency, amountCents: fare.totalCents,
            driverEarningsCents: share, commissionCents: fare.totalCents - share, capturedAt: receipt.capturedAt)
        return try await store.recordPayment(payment).payment
    }
}
