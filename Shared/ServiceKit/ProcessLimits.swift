import CLinux
import Foundation

/// Process limits a server wants raised at start-up.
public enum ProcessLimits {
    /// Raises the soft limit of open descriptors to the hard limit: every device connection, every
    /// libzmq socket (a connection plus its mailbox) takes descriptors, and the usual soft limit of
    /// 1024 would stop a tracking service at a few hundred devices. Returns the new soft limit.
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(resource, &limit)
        }
        return UInt64(limit.rlim_cur)
    }

    /// Keeps freed memory in glibc's per-thread heaps instead of handing it back at once. By
    /// default each heap shrinks (an `mprotect` call) whenever its top free block passes 128 KiB,
    /// and grows again on the next burst: measured 4 000 `mprotect` calls a second on tracking's
    /// ingest thread at 10 000 batches a second. 32 MiB of slack per heap ends that churn.
    public static func keepFreedMemoryLonger() {
        ride_set_malloc_slack(32 << 20, 4 << 20)
    }
}
