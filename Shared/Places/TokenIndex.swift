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
    private let maxLength: Int
    /// Per word, `letters` of each of its prefixes (index: length − 1).
    private let letterMasks: [[UInt64]]

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
        maxLength = words.map(\.count).max() ?? 0
        letterMasks = words.map { word in word.indices.map { Self.letters(word[...$0]) } }
    }

    /// The entries matching `token`, each with its best kind of match. `typing`: the query's last
    /// word, which may be unfinished, so a typo may be in a prefix of the word. `typos`: false to
    /// skip the typo search, the costly part.
    func entries(matching token: String, typing: Bool, typos: Bool = true) -> [Int32: Match] {
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
        guard typos, limit > 0, !PlaceText.isNumber(token) else { return found }
        // The word being typed may be the start of a longer word: only its first letters count.
        let reach = query.count + limit
        let queryLetters = Self.letters(query[...])
        var rows = EditRows()
        var last: (prefix: ArraySlice<UInt8>, row: [Int]?)? = nil
        for length in (query.count - limit)...(typing ? max(maxLength, reach) : reach) {
            for word in byLength[length] ?? [] {
                let head = words[word].prefix(reach)
                // A letter of the query that the word lacks takes an edit: most words lack more.
                guard (queryLetters & ~letterMasks[word][head.count - 1]).nonzeroBitCount <= limit else { continue }
                if last?.prefix != head { last = (head, PlaceText.distances(query[...], head, limit: limit, rows: &rows)) }
                guard let row = last?.row else { continue }
                let whole = words[word].count == head.count && row[head.count] <= limit
                let start = typing ? max(1, query.count - limit) : head.count
                if whole || (start <= head.count && row[start...head.count].contains { $0 <= limit }) { add(word, .typo) }
            }
        }
        return found
    }

    /// A bit per letter (the low 6 bits of its byte): enough to tell most words apart cheaply.
    static func letters(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 | (1 << UInt64($1 & 63)) }
    }

    /// No typos in words of one or two letters (too many words are that close), one in words up
    /// to five letters, two in longer ones.
    static func typoLimit(_ query: [UInt8]) -> Int {
        query.count <= 2 ? 0 : query.count <= 5 ? 1 : 2
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
