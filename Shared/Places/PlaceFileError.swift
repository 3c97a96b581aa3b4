/// Why a places file cannot be read: says which line and what is wrong with it.
public struct PlaceFileError: Error, Sendable, CustomStringConvertible, Equatable {
    public let description: String

    public init(_ description: String) { self.description = description }

    static func line(_ number: Int, _ problem: String) -> PlaceFileError {
        PlaceFileError("places file, line \(number): \(problem)")
    }
}
