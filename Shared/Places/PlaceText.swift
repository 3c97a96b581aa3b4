import Foundation

/// How names and queries are compared: case-folded, without diacritics ("Töölö" is "toolo"),
/// split into words at anything that is not a letter or a digit. A house number's letter joins
/// its number ("1 B" is "1b"), as addresses are written both ways.
enum PlaceText {
    static func tokens(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
            .replacing(/[øæœßđłþ]/) { match in Self.letters[String(match.output)] ?? "" }
        var tokens: [String] = []
        var current = ""
        for character in folded {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                tokens.append(current)
                current = ""
            }
        }
        if !current.isEmpty { tokens.append(current) }
        return joiningHouseLetters(tokens)
    }

    /// Letters that are not a letter and a diacritic, so folding keeps them: as a Finn types them.
    private static let letters: [String: String] = ["ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "đ": "d", "ł": "l", "þ": "th"]

    static func isNumber(_ token: String) -> Bool {
        token.first?.isNumber == true
    }

    /// "12", "b" → "12b": one letter right after a number is the house's letter.
    private static func joiningHouseLetters(_ tokens: [String]) -> [String] {
        var joined: [String] = []
        for token in tokens {
            if token.count == 1, token.first?.isLetter == true, let last = joined.last, last.allSatisfy(\.isNumber) {
                joined[joined.count - 1] = last + token
            } else {
                joined.append(token)
            }
        }
        return joined
    }

    /// The edit distances (insertions, deletions, substitutions, transpositions of neighbours)
    /// between UTF-8 spellings: from all of `a` to each prefix of `b`, as the last row of the
    /// table (index j: `b`'s first j bytes; more than `limit` is `limit + 1`), or nil when every
    /// one is above `limit`. Only a band of width 2·limit+1 is computed, in `rows`' buffers, so a
    /// limit of 1 or 2 costs a few operations per byte and no allocation.
    static func distances(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, limit: Int, rows: inout EditRows) -> [Int]? {
        let big = limit + 1
        rows.reset(count: b.count + 1, big: big)
        for j in 0...b.count { rows.previous[j] = min(j, big) }
        guard !a.isEmpty else { return rows.previous }
        for i in 1...a.count {
            rows.current[0] = min(i, big)
            let low = max(1, i - limit)
            let high = min(b.count, i + limit)
            if low > 1 { rows.current[low - 1] = big }
            var rowBest = rows.current[0]
            if low <= high {
                for j in low...high {
                    let ai = a[a.startIndex + i - 1]
                    let bj = b[b.startIndex + j - 1]
                    var value = min(rows.previous[j - 1] + (ai == bj ? 0 : 1), rows.previous[j] + 1, rows.current[j - 1] + 1)
                    if i > 1, j > 1, ai == b[b.startIndex + j - 2], a[a.startIndex + i - 2] == bj {
                        value = min(value, rows.previous2[j - 2] + 1)
                    }
                    rows.current[j] = min(value, big)
                    rowBest = min(rowBest, rows.current[j])
                }
            }
            if high < b.count { for j in (high + 1)...b.count { rows.current[j] = big } }
            guard rowBest <= limit else { return nil }
            swap(&rows.previous2, &rows.previous)
            swap(&rows.previous, &rows.current)
        }
        return rows.previous
    }

    /// The edit distance between `a` and `b`, or nil when it is above `limit`.
    static func distance(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, limit: Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        var rows = EditRows()
        return distances(a, b, limit: limit, rows: &rows).flatMap { $0[b.count] <= limit ? $0[b.count] : nil }
    }
}

/// The three rows `PlaceText.distances` works in, kept between calls.
struct EditRows {
    var previous2: [Int] = []
    var previous: [Int] = []
    var current: [Int] = []

    mutating func reset(count: Int, big: Int) {
        if previous.count < count {
            previous2 = [Int](repeating: big, count: max(count, 64))
            previous = previous2
            current = previous2
        } else {
            for j in 0..<count {
                previous2[j] = big
                current[j] = big
            }
        }
    }
}
