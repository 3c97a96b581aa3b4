import BusModel
import GRDB

/// SQLite's failures that are the machine's state, not a bug, answered as such: the caller may try
/// again later, and nothing was stored (the transaction rolled back).
extension DatabaseError: ServiceErrorConvertible {
    public var serviceError: ServiceError? {
        switch resultCode {
        case .SQLITE_FULL:
            ServiceError.storageFull
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            ServiceError(
                status: Status.unavailable, code: "storage_busy",
                message: "this service's database stayed locked by another writer; nothing was stored — try again")
        case .SQLITE_IOERR, .SQLITE_CANTOPEN:
            ServiceError(
                status: Status.unavailable, code: "storage_unavailable",
                message: "this service's database cannot be written (I/O error); nothing was stored — try again later")
        default:
            nil
        }
    }
}

extension ServiceError {
    /// The disk under the database is full (SQLite's SQLITE_FULL, PostgreSQL's 53100): the same answer from either.
    static let storageFull = ServiceError(
        status: Status.unavailable, code: "storage_full",
        message: "the disk holding this service's database is full; nothing was stored — try again later")
}
