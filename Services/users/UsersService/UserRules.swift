import Bus
import RideModels

/// What a user's params must be beyond what each field's type states with `@WireField` (checked
/// as the params are decoded): the rules between fields. Each problem names the field, for a 422.
public enum UserRules {
    /// Drivers need a car and a device id.
    public static func problem(with params: RegisterParams) -> String? {
        problem(role: params.role, car: params.car, deviceID: params.deviceID)
    }

    /// A new account's: a driver's needs a car and a device id.
    public static func problem(role: UserRole, car: Car?, deviceID: String?) -> String? {
        if role == .driver {
            if car == nil { return "car: a driver needs a car (model and license_plate)" }
            if deviceID == nil { return "device_id: a driver needs the device id of their phone's tracking SDK" }
        }
        return nil
    }

    public static func problem(with params: UpdateUserParams, role: UserRole) -> String? {
        if params.car != nil, role == .rider { return "car: only drivers have a car" }
        return nil
    }

    /// A place labelled `other` needs a name.
    public static func problem(with params: SavePlaceParams) -> String? {
        if params.label == .other, params.name == nil { return "name: required for a place labelled other" }
        return nil
    }
}
