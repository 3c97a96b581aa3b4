import Foundation

/// CPU time used so far, read from Linux's /proc: a process's (`/proc/<pid>/stat`, all its
/// threads, user + system) and the whole machine's (`/proc/stat`, busy and total). The lifecycle
/// benchmark reads them at the start and end of its measured window, so each process's CPU per
/// ride is printed beside the throughput — a figure that moves less from run to run than rides/s
/// on a saturated machine.
struct CPUTimes: Equatable {
    /// Clock ticks (`sysconf(_SC_CLK_TCK)`, 100 per second on Linux).
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// User + system ticks of one process, from the text of its `/proc/<pid>/stat`; nil when the
    /// text is not that shape. The command name (field 2, in parentheses) may hold spaces and
    /// parentheses itself, so fields are counted from the last `)`.
    static func processTicks(stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return user + system
    }

    /// (busy, total) ticks of all CPUs, from the text of `/proc/stat` (its `cpu ` line; idle and
    /// iowait are the time not busy); nil when the text is not that shape.
    static func machineTicks(stat: String) -> (busy: UInt64, total: UInt64)? {
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let values = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard values.count >= 5 else { return nil }
        // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice)
        let total = values.prefix(8).reduce(0, +)
        return (total - values[3] - values[4], total)
    }

    /// Seconds of CPU each named process has used, and the machine's busy and total seconds.
    var processes: [String: Double]
    var machineBusy: Double
    var machineTotal: Double

    /// Reads the processes' and the machine's times now; a process that is gone is left out.
    static func now(_ pids: [String: Int32]) -> CPUTimes {
        var processes: [String: Double] = [:]
        for (name, pid) in pids {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let ticks = processTicks(stat: text) {
                processes[name] = Double(ticks) / ticksPerSecond
            }
        }
        let machine = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(machineTicks) ?? (0, 0)
        return CPUTimes(
            processes: processes, machineBusy: Double(machine.busy) / ticksPerSecond, machineTotal: Double(machine.total) / ticksPerSecond)
    }

    /// What was used between `earlier` and this reading (processes present in both).
    func since(_ earlier: CPUTimes) -> CPUTimes {
        var used: [String: Double] = [:]
        for (name, seconds) in processes { if let before = earlier.processes[name] { used[name] = seconds - before } }
        return CPUTimes(processes: used, machineBusy: machineBusy - earlier.machineBusy, machineTotal: machineTotal - earlier.machineTotal)
    }
}
