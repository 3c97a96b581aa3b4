import Foundation

/// How names and queries are compared: case-folded, without diacritics ("Töölö" is "toolo"),
/// split into words at anything that is not a letter or a digit. A house number's letter joins
/// its number ("1 B" is "1b"), as addresses are written both ways.
enum PlaceText {
    static func tokens(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
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

    /// The edit distance between UTF-8 spellings (insertions, deletions, substitutions, transpositions of neighbours)
    /// between `a` and `b`, or nil when it is above `limit`. Only a band of width 2·limit+1 is
    /// computed, so a limit of 1 or 2 costs a few operations per character.
    static func distance(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, limit: Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        let big = limit + 1
        var previous2 = [Int](repeating: big, count: b.count + 1)
        var previous = Array(0...b.count).map { min($0, big) }
        var current = [Int](repeating: big, count: b.count + 1)
        for i in 1...a.count {
            current[0] = min(i, big)
            let low = max(1, i - limit)
            let high = min(b.count, i + limit)
            if low > 1 { current[low - 1] = big }
            var rowBest = current[0]
            if low <= high {
                for j in low...high {
                    let cost = a[a.startIndex + i - 1] == b[b.startIndex + j - 1] ? 0 : 1
                    var value = min(previous[j - 1] + cost, previous[j] + 1, current[j - 1] + 1)
                    if i > 1, j > 1, a[a.startIndex + i - 1] == b[b.startIndex + j - 2], a[a.startIndex + i - 2] == b[b.startIndex + j - 1] {
                        value = min(value, previous2[j - 2] + 1)
                    }
                    current[j] = min(value, big)
                    rowBest = min(rowBest, current[j])
                }
            }
            if high < b.count { current[high + 1] = big }
            guard rowBest <= limit else { return nil }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
