import Foundation

/// RFC 3339 timestamps (`2026-11-21T09:30:00.123Z`), formatted and parsed by hand.
///
/// Every event carries one, so this is on the hot path: Foundation's ISO 8601 formatters cost
/// microseconds each, this costs tens of nanoseconds. Output is always UTC with milliseconds;
/// input may have any fraction (or none) and a `Z` or `±HH:MM` offset.
public enum RFC3339 {
    public static func format(_ date: Date) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the time's text to `bytes` (the hot path of event encoding: no String made).
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        let totalMilliseconds = nearestMillisecond(date)
        var days = totalMilliseconds / 86_400_000
        var millisOfDay = totalMilliseconds % 86_400_000
        if millisOfDay < 0 {
            millisOfDay += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let hour = millisOfDay / 3_600_000
        let minute = millisOfDay / 60_000 % 60
        let second = millisOfDay / 1000 % 60
        let millis = millisOfDay % 1000

        append(year, width: 4, then: "-", to: &bytes)
        append(month, width: 2, then: "-", to: &bytes)
        append(day, width: 2, then: "T", to: &bytes)
        append(hour, width: 2, then: ":", to: &bytes)
        append(minute, width: 2, then: ":", to: &bytes)
        append(second, width: 2, then: ".", to: &bytes)
        append(millis, width: 3, then: "Z", to: &bytes)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; nil when the text is anything else.
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= b.count else { return nil }
            var value: Int64 = 0
            for i in start..<(start + count) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            return value
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
            let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
            let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
            let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }

        var index = 19
        var fraction = 0.0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var numerator: Int64 = 0
            var denominator: Int64 = 1
            let start = index
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                // Digits past nanoseconds are read but cannot change a Date.
                if denominator < 1_000_000_000 {
                    numerator = numerator * 10 + Int64(b[index] - 48)
                    denominator *= 10
                }
                index += 1
            }
            guard index > start else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        guard index < b.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[index] == UInt8(ascii: "+") ? 1 : -1
            guard let oh = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == UInt8(ascii: ":"),
                let om = digits(index + 4, 2), oh < 24, om < 60
            else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let date = Date(timeIntervalSince1970: Double(seconds) + fraction)
        // Only an instant `format` writes back: an offset (or rounding to the millisecond) can carry
        // a time of year 0000 or 9999 outside the four-digit UTC years, and an event accepted must
        // be passed on as it came (shown by the fuzz target's round-trip property, Fuzz/).
        guard writableMilliseconds.contains(nearestMillisecond(date)) else { return nil }
        return date
    }

    /// The instants `format` writes: 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, in
    /// milliseconds since 1970.
    static let writableMilliseconds: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// The time in whole milliseconds since 1970, as `format` writes it: the nearest, since a Date
    /// made from whole milliseconds is often a hair below them in binary.
    static func nearestMillisecond(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    // Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `value` in `width` digits, then `separator`.
    private static func append(_ value: Int64, width: Int, then separator: Unicode.Scalar, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(48, count: width))
        var v = value
        for i in stride(from: start + width - 1, through: start, by: -1) {
            bytes[i] = UInt8(48 + v % 10)
            v /= 10
        }
        bytes.append(UInt8(ascii: separator))
    }
}
