import Foundation

/// Whether a child has ended, asked of the kernel (`waitid` with `WNOWAIT`: the child is left for
/// Foundation to reap). Foundation's `Process` learns of an exit when a socket it hands the child
/// closes, and a process another thread spawns in the same instant inherits that socket: a server
/// started beside a short command then keeps `isRunning` true and the termination handler unsent
/// until the server ends.
public enum ChildExit {
    /// The exit status (or the signal that ended it), or nil while the child runs.
    public static func status(of process: Process) -> Int32? {
        var info = siginfo_t()
        let pid = process.processIdentifier
        if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
            return info._sifields._sigchld.si_pid == pid ? info._sifields._sigchld.si_status : nil
        }
        // Reaped already: Foundation saw the end (and says so once its callback has run).
        return process.isRunning ? nil : process.terminationStatus
    }
}
