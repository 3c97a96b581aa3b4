/// The words of every entry, for finding the entries a query word names: exactly, as a prefix
/// (the word being typed), or with a typo.
///
/// Exact words are a dictionary look-up and prefixes a binary search in the sorted words; typos
/// compare the query word with the words of similar length only, with a banded edit distance
/// (central Helsinki has a few thousand distinct words, so that stays well under a millisecond
/// in a release build without a trigram index).
struct TokenIndex: Sendable {
    enum Match: Int, Comparable, Sendable {
        case exact = 0
        case prefix
        case typo

        static func < (a: Match, b: Match) -> Bool { a.rawValue < b.rawValue }
    }

    /// Distinct words in UTF-8 order, so that the words with a prefix are one run.
    private let words: [[UInt8]]
    /// The entries each word of `words` occurs in.
    private let postings: [[Int32]]
    private let byWord: [[UInt8]: Int]
    /// Indices into `words` by word length, for the typo search.
    private let byLength: [Int: [Int]]

    init(documents: [[String]]) {
        var occurrences: [[UInt8]: Set<Int32>] = [:]
        for (entry, tokens) in documents.enumerated() {
            for token in tokens { occurrences[Array(token.utf8), default: []].insert(Int32(entry)) }
        }
        let words = occurrences.keys.sorted { $0.lexicographicallyPrecedes($1) }
        self.words = words
        postings = words.map { occurrences[$0]!.sorted() }
        byWord = Dictionary(uniqueKeysWithValues: words.enumerated().map { ($1, $0) })
        byLength = Dictionary(grouping: words.indices) { words[$0].count }
    }

    /// The entries matching `token`, each with its best kind of match. `typing`: the query's last
    /// word, which may be unfinished, so a typo may be in a prefix of the word.
    func entries(matching token: String, typing: Bool) -> [Int32: Match] {
        let query = Array(token.utf8)
        var found: [Int32: Match] = [:]
        func add(_ word: Int, _ match: Match) {
            for entry in postings[word] where found[entry].map({ match < $0 }) ?? true { found[entry] = match }
        }
        if let word = byWord[query] { add(word, .exact) }
        var index = lowerBound(query)
        while index < words.count, words[index].starts(with: query) {
            if words[index] != query { add(index, .prefix) }
            index += 1
        }
        let limit = Self.typoLimit(query)
        guard limit > 0, !PlaceText.isNumber(token) else { return found }
        let lengths = typing ? (query.count - limit)...(query.count + 40) : (query.count - limit)...(query.count + limit)
        for length in lengths {
            for word in byLength[length] ?? [] where isTypo(query, of: words[word], limit: limit, typing: typing) {
                add(word, .typo)
            }
        }
        return found
    }

    /// No typos in words of one or two letters (too many words are that close), one in words up
    /// to five letters, two in longer ones.
    static func typoLimit(_ query: [UInt8]) -> Int {
        query.count <= 2 ? 0 : query.count <= 5 ? 1 : 2
    }

    private func isTypo(_ query: [UInt8], of word: [UInt8], limit: Int, typing: Bool) -> Bool {
        if PlaceText.distance(query[...], word[...], limit: limit) != nil { return true }
        guard typing, word.count > query.count else { return false }
        // The word being typed: a typo within the first letters of a longer word.
        for length in max(1, query.count - limit)...min(word.count, query.count + limit) where PlaceText.distance(query[...], word[..<length], limit: limit) != nil {
            return true
        }
        return false
    }

    private func lowerBound(_ query: [UInt8]) -> Int {
        var low = 0
        var high = words.count
        while low < high {
            let middle = (low + high) / 2
            if words[middle].lexicographicallyPrecedes(query) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
