import Foundation
import ServiceStorage
import Storage
import Testing

@testable import Storage

@Suite struct PostgresURLTests {
    @Test func goodURLsAndTheirDefaults() throws {
        let full = try PostgresURL(parsing: "postgres://ride:s3cret@db.internal:6543/rides?sslmode=require")
        #expect(
            full == PostgresURL(host: "db.internal", port: 6543, username: "ride", password: "s3cret", database: "rides", tls: .require))
        #expect(full.description == "postgres://ride:***@db.internal:6543/rides?sslmode=require", "the password never printed")
        let short = try PostgresURL(parsing: "postgresql://ride@localhost/rides")
        #expect(short == PostgresURL(host: "localhost", port: 5432, username: "ride", database: "rides", tls: .disable))
    }

    /// A primary and its standbys, as libpq lists them: tried in order, the one taking writes used.
    @Test func aListOfHostsIsAPrimaryAndItsStandbys() throws {
        let listed = try PostgresURL(parsing: "postgres://ride:s3cret@db-a:5433,db-b,10.0.0.7:6000/rides?target_session_attrs=read-write")
        #expect(listed.hosts == [.init("db-a", port: 5433), .init("db-b"), .init("10.0.0.7", port: 6000)])
        #expect(
            listed.host == "db-a" && listed.port == 5433 && listed.password == "s3cret" && listed.database == "rides"
                && listed.targetSessionAttrs == .readWrite)
        #expect(
            listed.description
                == "postgres://ride:***@db-a:5433,db-b:5432,10.0.0.7:6000/rides?sslmode=disable&target_session_attrs=read-write")
        #expect(
            try PostgresURL(parsing: "postgres://u@a,b/db?target_session_attrs=primary").targetSessionAttrs == .readWrite,
            "libpq's other spelling")
        #expect(try PostgresURL(parsing: "postgres://u@a/db").targetSessionAttrs == .any)
    }

    @Test(arguments: [
        ("", "is not a URL"),
        ("mysql://ride@db/rides", "scheme \"mysql\" is not postgres://"),
        ("postgres://db/rides", "no user"),
        ("postgres://ride@/rides", "no host"),
        ("postgres://ride:pw@db", "no database name in postgres://ride:***@db"),
        ("postgres://ride@db/a/b", "no database name"),
        ("postgres://ride@db:70000/rides", "port 70000 is not from 1 to 65535"),
        ("postgres://ride@db/rides?sslmode=always", "sslmode \"always\" is not one of disable, prefer, require"),
        ("postgres://ride@db/rides?timeout=3", "unknown parameter \"timeout\""),
        ("postgres://ride@a,,b/rides", "host \"\" in the list"),
        ("postgres://ride@a,b:x/rides", "port \"x\" of b is not from 1 to 65535"),
        ("postgres://ride:pw@a,b:1:2/rides", "host \"b:1:2\" in the list of postgres://ride:***@a,b:1:2/rides"),
        (
            "postgres://ride@a,b/rides?target_session_attrs=standby",
            "target_session_attrs \"standby\" is not one of any, read-write, primary"
        ),
    ])
    func badURLsAreNamed(text: String, expected: String) {
        #expect { try PostgresURL(parsing: text) } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func theOptionSaysWhichSettingWasWrong() throws {
        let options = try DatabaseOptions.parse([])
        #expect(try options.location(sqlitePath: "/d/users.sqlite", environment: [:]) == .sqlite(path: "/d/users.sqlite"))
        #expect(
            try options.location(sqlitePath: "/d/users.sqlite", environment: ["RIDE_DATABASE_URL": "postgres://u@h/db"])
                == .postgres(PostgresURL(host: "h", username: "u", database: "db")))
        #expect { try options.location(sqlitePath: "x", environment: ["RIDE_DATABASE_URL": "postgres://h/db"]) } throws: { error in
            "\(error)".hasPrefix("RIDE_DATABASE_URL: no user")
        }
        let flagged = try DatabaseOptions.parse(["--database-url", "pg://u@h/db"])
        #expect { try flagged.location(sqlitePath: "x", environment: [:]) } throws: { error in
            "\(error)".hasPrefix("--database-url: scheme")
        }
    }

    @Test func sqliteMigrationsAreTranslated() {
        let translated = PostgresSchema.translated([
            (
                "v1",
                """
                CREATE TABLE a (id TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL, x REAL, body BLOB, pointer INTEGERS) WITHOUT ROWID;
                CREATE TABLE b (k TEXT, PRIMARY KEY (k))
                  WITHOUT ROWID;
                """
            )
        ])
        #expect(translated.map(\.name) == ["v1"])
        #expect(
            translated[0].sql == """
                CREATE TABLE a (id TEXT PRIMARY KEY NOT NULL, n BIGINT NOT NULL, x DOUBLE PRECISION, body BYTEA, pointer INTEGERS);
                CREATE TABLE b (k TEXT, PRIMARY KEY (k));
                """)
    }

    @Test func migrationsSplitIntoStatements() {
        let sql = """
            -- a comment; with a semicolon
            CREATE TABLE a (
                x INT, -- the x; of it
                y TEXT DEFAULT 'a;b'
            );CREATE INDEX a_x ON a (x);

            ALTER TABLE a ADD COLUMN z TEXT
            """
        #expect(
            PostgresSchema.statements(sql) == [
                "CREATE TABLE a (\n    x INT, \n    y TEXT DEFAULT 'a;b'\n)", "CREATE INDEX a_x ON a (x)",
                "ALTER TABLE a ADD COLUMN z TEXT",
            ])
    }
}
