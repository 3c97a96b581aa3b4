import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// A page the gateway serves, with a content security policy made for it: its own inline
/// `<script>` and `<style>` blocks are allowed by their SHA-256 (no `'unsafe-inline'`), anything
/// else inline — an injected script, a `style=` attribute, an `on…=` handler — is refused. Computed
/// once, when the gateway starts.
struct HTMLPage: Sendable {
    let body: ByteBuffer
    let policy: String

    /// - Parameter sources: more allowed sources for `script-src` and `style-src` (`'self'` for
    ///   the web apps' files).
    init(_ html: String, sources: String? = nil) {
        body = ByteBuffer(string: html)
        let scripts = Self.hashes(of: "script", in: html)
        let styles = Self.hashes(of: "style", in: html)
        let allowed = { (hashes: [String]) in ([sources].compactMap { $0 } + hashes).joined(separator: " ") }
        policy =
            "default-src 'none'; script-src \(allowed(scripts).isEmpty ? "'none'" : allowed(scripts)); "
            + "style-src \(allowed(styles).isEmpty ? "'none'" : allowed(styles)); img-src 'self' data:; connect-src 'self'; "
            + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    }

    /// `'sha256-…'` of each inline `<tag>` block's text (a block with attributes, such as
    /// `<script src=…>`, is not inline and is skipped).
    static func hashes(of tag: String, in html: String) -> [String] {
        var hashes: [String] = []
        var rest = html[...]
        while let open = rest.range(of: "<\(tag)>"), let close = rest[open.upperBound...].range(of: "</\(tag)>") {
            let text = rest[open.upperBound..<close.lowerBound]
            hashes.append("'sha256-\(Data(SHA256.hash(data: Data(text.utf8))).base64EncodedString())'")
            rest = rest[close.upperBound...]
        }
        return hashes
    }

    func response() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: policy, .cacheControl: "no-cache"],
            body: .init(byteBuffer: body))
    }
}
