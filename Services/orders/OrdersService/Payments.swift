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
    /// Which charge of the order this is: 0 the first, n the rider's n-th charge again after a
    /// failure (a card provider keys each round apart; the ledger never fails, so never sees one).
    public var round: Int

    public init(
        idempotencyKey: String, payerID: String, payeeID: String, currency: String, amountCents: Int, payeeShareCents: Int, round: Int = 0
    ) {
        self.idempotencyKey = idempotencyKey
        self.round = round
        self.payerID = payerID
        self.payeeID = payeeID
        self.currency = currency
        self.amountCents = amountCents
        self.payeeShareCents = payeeShareCents
    }
}

/// A charge to give back, whole: the order's key and the provider's reference for the charge.
public struct RefundRequest: Sendable, Equatable {
    public var idempotencyKey: String
    public var chargeReference: String
    public var charge: ChargeRequest

    public init(idempotencyKey: String, chargeReference: String, charge: ChargeRequest) {
        (self.idempotencyKey, self.chargeReference, self.charge) = (idempotencyKey, chargeReference, charge)
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
    /// Gives a charge back, whole (the driver's share and the commission too); idempotent by `idempotencyKey`.
    func refund(_ request: RefundRequest) async throws -> ChargeReceipt
}

public enum PaymentError: Error, Equatable, CustomStringConvertible {
    /// The same key was charged before with different terms: never charge twice, never silently differ.
    case keyReused(String)
    /// The provider refused the charge (a declined card, no card, a request it finds invalid): retrying cannot help.
    case declined(String)

    public var description: String {
        switch self {
        case .keyReused(let key): "idempotency key \(key) was already charged with different terms"
        case .declined(let why): "the payment provider refused: \(why)"
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
        ),
        (
            "v2",
            """
            CREATE TABLE refunds (
                idempotency_key TEXT PRIMARY KEY NOT NULL,
                reference TEXT NOT NULL UNIQUE,
                charge_reference TEXT NOT NULL,
                refunded_at_ms INTEGER NOT NULL
            );
            """
        ),
    ]

    public func charge(_ request: ChargeRequest) async throws -> ChargeReceipt {
        try await database.write { db in
            if let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM charges WHERE idempotency_key = ?"), arguments: [request.idempotencyKey])
            {
                return try LedgerBooks.repeated(
                    request,
                    stored: (row["currency"], row["amount_cents"], row["payee_share_cents"], row["reference"], row["captured_at_ms"]))
            }
            let (receipt, milliseconds) = LedgerBooks.newReceipt()
            try db.run(
                """
                INSERT INTO charges (idempotency_key, reference, currency, amount_cents, payee_share_cents, captured_at_ms) VALUES (?, ?, ?, ?, ?, ?)
                """,
                [request.idempotencyKey, receipt.reference, request.currency, request.amountCents, request.payeeShareCents, milliseconds])
            for (account, amount) in LedgerBooks.entries(of: request) {
                try db.run("INSERT INTO entries (reference, account, amount_cents) VALUES (?, ?, ?)", [receipt.reference, account, amount])
            }
            return receipt
        }
    }

    public func refund(_ request: RefundRequest) async throws -> ChargeReceipt {
        try await database.write { db in
            if let row = try Row.fetchOne(
                db, sql: "SELECT reference, refunded_at_ms FROM refunds WHERE idempotency_key = ?", arguments: [request.idempotencyKey])
            {
                return LedgerBooks.receipt(row[0], row[1])
            }
            guard
                try db.value(String.self, "SELECT reference FROM charges WHERE idempotency_key = ?", [request.idempotencyKey])
                    == request.chargeReference
            else {
                throw PaymentError.declined("no charge \(request.chargeReference) for \(request.idempotencyKey) in the books")
            }
            let (receipt, milliseconds) = LedgerBooks.newReceipt(prefix: "re-")
            try db.run(
                "INSERT INTO refunds (idempotency_key, reference, charge_reference, refunded_at_ms) VALUES (?, ?, ?, ?)",
                [request.idempotencyKey, receipt.reference, request.chargeReference, milliseconds])
            for (account, amount) in LedgerBooks.entries(of: request.charge) {
                try db.run(
                    "INSERT INTO entries (reference, account, amount_cents) VALUES (?, ?, ?)", [receipt.reference, account, -amount])
            }
            return receipt
        }
    }

    public func balance(_ account: String) async throws -> Int {
        try await database.read { db in
            try db.value(Int.self, "SELECT COALESCE(SUM(amount_cents), 0) FROM entries WHERE account = ?", [account]) ?? 0
        }
    }

    public func chargeCount() async throws -> Int {
        try await database.read { db in try db.value(Int.self, "SELECT COUNT(*) FROM charges") ?? 0 }
    }
}

/// The books' rules, the same in either database.
enum LedgerBooks {
    /// A new receipt, its time in milliseconds as stored: a repeated charge returns exactly the first receipt.
    static func newReceipt(prefix: String = "ch-") -> (ChargeReceipt, Int64) {
        let milliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        return (receipt(prefix + UUID().uuidString.lowercased().prefix(18), milliseconds), milliseconds)
    }

    /// A receipt as stored: its reference and time in milliseconds.
    static func receipt(_ reference: String, _ milliseconds: Int64) -> ChargeReceipt {
        ChargeReceipt(reference: reference, capturedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The three entries of a charge; they sum to zero.
    static func entries(of request: ChargeRequest) -> [(account: String, amount: Int)] {
        [
            ("rider:\(request.payerID)", -request.amountCents), ("driver:\(request.payeeID)", request.payeeShareCents),
            ("platform", request.amountCents - request.payeeShareCents),
        ]
    }

    /// The first charge under a key, returned again — or refused when the terms differ.
    static func repeated(
        _ request: ChargeRequest, stored: (currency: String, amount: Int, share: Int, reference: String, capturedAtMS: Int64)
    ) throws -> ChargeReceipt {
        guard stored.amount == request.amountCents, stored.share == request.payeeShareCents, stored.currency == request.currency else {
            throw PaymentError.keyReused(request.idempotencyKey)
        }
        return receipt(stored.reference, stored.capturedAtMS)
    }
}

/// The ledger in PostgreSQL (schema `ledger`), when orders' state is there: one set of books for
/// every instance, as a card processor would be, so a charge retried by another instance is the
/// same charge.
public final class PostgresLedgerPaymentProvider: LedgerBooksProvider, PostgresSchemaStore {
    public let name = "ledger"
    public let postgres: PostgresSchema

    public static let defaultSchema = "ledger"
    public static let keepsOutbox = false
    public static let migrations = PostgresSchema.translated(LedgerPaymentProvider.migrations)

    public init(postgres: PostgresSchema) {
        self.postgres = postgres
    }

    public func charge(_ request: ChargeRequest) async throws -> ChargeReceipt {
        try await writeLocked(request.idempotencyKey) { connection, logger in
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
            try await Self.book(LedgerBooks.entries(of: request), under: receipt.reference, on: connection, logger: logger)
            return receipt
        }
    }

    public func refund(_ request: RefundRequest) async throws -> ChargeReceipt {
        try await writeLocked(request.idempotencyKey) { connection, logger in
            if let (reference, milliseconds) = try await connection.first(
                "SELECT reference, refunded_at_ms FROM refunds WHERE idempotency_key = \(request.idempotencyKey)", as: (String, Int64).self,
                logger: logger)
            {
                return LedgerBooks.receipt(reference, milliseconds)
            }
            let charged = try await connection.first(
                "SELECT reference FROM charges WHERE idempotency_key = \(request.idempotencyKey)", as: String.self, logger: logger)
            guard charged == request.chargeReference else {
                throw PaymentError.declined("no charge \(request.chargeReference) for \(request.idempotencyKey) in the books")
            }
            let (receipt, milliseconds) = LedgerBooks.newReceipt(prefix: "re-")
            try await connection.run(
                """
                INSERT INTO refunds (idempotency_key, reference, charge_reference, refunded_at_ms)
                VALUES (\(request.idempotencyKey), \(receipt.reference), \(request.chargeReference), \(milliseconds))
                """, logger: logger)
            try await Self.book(
                LedgerBooks.entries(of: request.charge), negated: true, under: receipt.reference, on: connection, logger: logger)
            return receipt
        }
    }

    /// A write under `key`'s lock: instances charging or refunding one order at once queue on it,
    /// and the second finds the first's row.
    private func writeLocked<Result: Sendable>(
        _ key: String, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        return try await postgres.write { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\("ledger." + key)))", logger: logger)
            return try await body(connection, logger)
        }
    }

    /// A receipt's entries in the books (`negated` for a refund's).
    private static func book(
        _ entries: [(account: String, amount: Int)], negated: Bool = false, under reference: String, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        for (account, amount) in entries {
            try await connection.run(
                "INSERT INTO entries (reference, account, amount_cents) VALUES (\(reference), \(account), \(negated ? -amount : amount))",
                logger: logger)
        }
    }

    public func balance(_ account: String) async throws -> Int {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT COALESCE(SUM(amount_cents), 0)::BIGINT FROM entries WHERE account = \(account)", as: Int.self, logger: logger) ?? 0
        }
    }

    public func chargeCount() async throws -> Int {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first("SELECT COUNT(*) FROM charges", as: Int.self, logger: logger) ?? 0
        }
    }
}
