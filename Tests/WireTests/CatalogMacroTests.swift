import Testing
import Wire

/// `@Catalog` lists the descriptors of exactly the static constants made by the named callees, in
/// declaration order (how `RideContract.ops` and `.events` are made).
@Suite struct CatalogMacroTests {
    struct Entry {
        let descriptor: String
    }

    static func entry(_ name: String) -> Entry { Entry(descriptor: name) }

    @Catalog("Entry", "CatalogMacroTests.entry")
    enum Sample {
        static let first = Entry(descriptor: "first")
        static let root = "not an entry"
        static let second = CatalogMacroTests.entry("second")
        static var computed: Entry { Entry(descriptor: "computed") }
        static let third = Entry(descriptor: "third")
    }

    @Test func itListsTheConstantsOfTheNamedCalleesInOrder() {
        #expect(Sample.catalog == ["first", "second", "third"])
    }
}
