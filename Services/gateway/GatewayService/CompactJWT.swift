import Foundation

/// The parts of a compact JWT (`header.claims.signature`), read without checking the signature:
/// only for a token about to be verified (its header names the key) or one already verified.
enum CompactJWT {
    /// Part `index` (0: the header, 1: the claims), base64url-decoded; nil unless the token has
    /// three parts and that one is base64url.
    static func part(_ index: Int, of token: String) -> Data? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.indices.contains(index), !parts[index].isEmpty else { return nil }
        var base64 = parts[index].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
