import Bus
import RideModels

/// What a user's fields must be. Each problem names the field, for a 422.
public enum UserRules {
    public static func problem(name: String) -> String? {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return "name: must not be empty" }
        if name.count > 100 { return "name: must be at most 100 characters" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "name: must not contain control characters" }
        return nil
    }

    /// E.164: a `+`, then 8 to 15 digits, the first not 0 (`+380501234567`).
    public static func problem(phoneNumber: String) -> String? {
        let digits = phoneNumber.dropFirst()
        guard phoneNumber.hasPrefix("+"), (8...15).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            digits.first != "0"
        else { return "phone_number: must be in international form, a + and 8 to 15 digits (+380501234567), got \"\(phoneNumber.prefix(40))\"" }
        return nil
    }

    public static func problem(password: String) -> String? {
        if password.count < 8 { return "password: must be at least 8 characters" }
        if password.utf8.count > 1024 { return "password: must be at most 1024 bytes" }
        return nil
    }

    public static func problem(deviceID: String) -> String? {
        if deviceID.isEmpty || deviceID.utf8.count > 128 { return "device_id: must be 1 to 128 bytes" }
        if DeviceIdentity.problem(with: deviceID) != nil { return "device_id: must be printable ASCII without spaces (it names a topic)" }
        return nil
    }

    public static func problem(car: Car) -> String? {
        if car.model.trimmingCharacters(in: .whitespaces).isEmpty || car.model.count > 100 { return "car.model: must be 1 to 100 characters" }
        if car.licensePlate.trimmingCharacters(in: .whitespaces).isEmpty || car.licensePlate.count > 20 { return "car.license_plate: must be 1 to 20 characters" }
        return nil
    }

    /// The first problem of a registration; drivers need a car and a device id.
    public static func problem(with params: RegisterParams) -> String? {
        if let problem = problem(name: params.name) ?? problem(phoneNumber: params.phoneNumber) ?? problem(password: params.password) { return problem }
        if let deviceID = params.deviceID, let problem = problem(deviceID: deviceID) { return problem }
        if let car = params.car, let problem = problem(car: car) { return problem }
        if params.role == .driver {
            if params.car == nil { return "car: a driver needs a car (model and license_plate)" }
            if params.deviceID == nil { return "device_id: a driver needs the device id of their phone's tracking SDK" }
        }
        return nil
    }

    public static func problem(with params: UpdateUserParams, role: UserRole) -> String? {
        if let name = params.name, let problem = problem(name: name) { return problem }
        if let phone = params.phoneNumber, let problem = problem(phoneNumber: phone) { return problem }
        if let password = params.password, let problem = problem(password: password) { return problem }
        if let deviceID = params.deviceID, let problem = problem(deviceID: deviceID) { return problem }
        if let car = params.car {
            if role == .rider { return "car: only drivers have a car" }
            if let problem = problem(car: car) { return problem }
        }
        return nil
    }

    /// A saved place: `other` needs a name; names are 1 to 60 characters; the place must be valid.
    public static func problem(with params: SavePlaceParams) -> String? {
        if params.label == .other, params.name == nil { return "name: required for a place labelled other" }
        if let name = params.name {
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || name.count > 60 { return "name: must be 1 to 60 characters" }
        }
        return PlaceRules.problem(place: params.place, field: "place")
    }
}
