import Bus
import Foundation
import Geo

// One-pass readers (see `JSONReadable`) for what every follower of the ride's lifecycle decodes:
// order status events (the orders reactor, users, notifications, the simulator and the benchmark)
// and trip events. JSONDecoder took a sixth of ride-orders' CPU in `ridectl bench lifecycle`.
// LifecycleReadingTests compares the readers with JSONDecoder on mutated documents.

extension Place: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Place? {
        var (latitude, longitude, address): (Double?, Double?, String?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "latitude": latitude = reader.number(); return latitude != nil
            case "longitude": longitude = reader.number(); return longitude != nil
            case "address": return reader.optional(&address) { $0.string() }
            default: return reader.skipValue()
            }
        }
        guard read, let latitude, let longitude else { return nil }
        return Place(latitude: latitude, longitude: longitude, address: address)
    }
}

extension Car: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Car? {
        var (model, licensePlate): (String?, String?) = (nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "model": model = reader.string(); return model != nil
            case "license_plate": licensePlate = reader.string(); return licensePlate != nil
            default: return reader.skipValue()
            }
        }
        guard read, let model, let licensePlate else { return nil }
        return Car(model: model, licensePlate: licensePlate)
    }
}

extension UserRating: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> UserRating? {
        var (average, count): (Double?, Int?) = (nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "average": average = reader.number(); return average != nil
            case "count": count = reader.integer(); return count != nil
            default: return reader.skipValue()
            }
        }
        guard read, let average, let count else { return nil }
        return UserRating(average: average, count: count)
    }
}

extension User: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> User? {
        var (id, role, name, phoneNumber, createdAt): (String?, UserRole?, String?, String?, Date?) = (nil, nil, nil, nil, nil)
        var (deviceID, car, rating): (String?, Car?, UserRating?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "id": id = reader.string(); return id != nil
            case "role": role = reader.string().flatMap(UserRole.init(rawValue:)); return role != nil
            case "name": name = reader.string(); return name != nil
            case "phone_number": phoneNumber = reader.string(); return phoneNumber != nil
            case "created_at": createdAt = reader.time(); return createdAt != nil
            case "device_id": return reader.optional(&deviceID) { $0.string() }
            case "car": return reader.optional(&car) { Car.read(from: &$0) }
            case "rating": return reader.optional(&rating) { UserRating.read(from: &$0) }
            default: return reader.skipValue()
            }
        }
        guard read, let id, let role, let name, let phoneNumber, let createdAt else { return nil }
        var user = User(id: id, role: role, name: name, phoneNumber: phoneNumber, deviceID: deviceID, car: car, createdAt: createdAt)
        user.rating = rating
        return user
    }
}

extension Order: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Order? {
        var (id, status, rider, pickup, dropoff): (String?, OrderStatus?, User?, Place?, Place?) = (nil, nil, nil, nil, nil)
        var (createdAt, updatedAt, version): (Date?, Date?, Int?) = (nil, nil, nil)
        var (offeredTo, declinedBy, offerHistory): ([String]?, [String]?, [String]?) = (nil, nil, nil)
        var (driver, tripID, dispatchRound, offeredAt, cancelReason, surge): (User?, String?, Int?, Date?, String?, Double?) = (nil, nil, nil, nil, nil, nil)
        var (summary, fare, ratingByRider, ratingByDriver): (TripSummary?, Fare?, RatingGiven?, RatingGiven?) = (nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "id": id = reader.string(); return id != nil
            case "status": status = reader.string().flatMap(OrderStatus.init(rawValue:)); return status != nil
            case "rider": rider = User.read(from: &reader); return rider != nil
            case "pickup": pickup = Place.read(from: &reader); return pickup != nil
            case "dropoff": dropoff = Place.read(from: &reader); return dropoff != nil
            case "created_at": createdAt = reader.time(); return createdAt != nil
            case "updated_at": updatedAt = reader.time(); return updatedAt != nil
            case "version": version = reader.integer(); return version != nil
            case "offered_to": offeredTo = reader.strings(); return offeredTo != nil
            case "declined_by": declinedBy = reader.strings(); return declinedBy != nil
            case "offer_history": offerHistory = reader.strings(); return offerHistory != nil
            case "driver": return reader.optional(&driver) { User.read(from: &$0) }
            case "trip_id": return reader.optional(&tripID) { $0.string() }
            case "dispatch_round": return reader.optional(&dispatchRound) { $0.integer() }
            case "offered_at": return reader.optional(&offeredAt) { $0.time() }
            case "cancel_reason": return reader.optional(&cancelReason) { $0.string() }
            case "surge": return reader.optional(&surge) { $0.number() }
            case "summary": return reader.optional(&summary) { TripSummary.read(from: &$0) }
            case "fare": return reader.optional(&fare) { Fare.read(from: &$0) }
            case "rating_by_rider": return reader.optional(&ratingByRider) { RatingGiven.read(from: &$0) }
            case "rating_by_driver": return reader.optional(&ratingByDriver) { RatingGiven.read(from: &$0) }
            default: return reader.skipValue()
            }
        }
        guard read, let id, let status, let rider, let pickup, let dropoff, let createdAt, let updatedAt, let version,
              let offeredTo, let declinedBy, let offerHistory else { return nil }
        var order = Order(id: id, status: status, rider: rider, pickup: pickup, dropoff: dropoff, createdAt: createdAt, updatedAt: updatedAt,
                          driver: driver, tripID: tripID, offeredTo: offeredTo, declinedBy: declinedBy, offerHistory: offerHistory,
                          version: version, cancelReason: cancelReason)
        order.dispatchRound = dispatchRound
        order.offeredAt = offeredAt
        order.surge = surge
        order.summary = summary
        order.fare = fare
        order.ratingByRider = ratingByRider
        order.ratingByDriver = ratingByDriver
        return order
    }
}

extension Fare: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Fare? {
        var (currency, totalCents, distance, duration, surge): (String?, Int?, Int?, Int?, Double?) = (nil, nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "currency": currency = reader.string(); return currency != nil
            case "total_cents": totalCents = reader.integer(); return totalCents != nil
            case "distance_m": distance = reader.integer(); return distance != nil
            case "duration_s": duration = reader.integer(); return duration != nil
            case "surge": return reader.optional(&surge) { $0.number() }
            default: return reader.skipValue()
            }
        }
        guard read, let currency, let totalCents, let distance, let duration else { return nil }
        return Fare(currency: currency, totalCents: totalCents, distanceMetres: distance, durationSeconds: duration, surge: surge)
    }
}

extension RatingGiven: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> RatingGiven? {
        var (stars, comment, createdAt): (Int?, String?, Date?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "stars": stars = reader.integer(); return stars != nil
            case "comment": return reader.optional(&comment) { $0.string() }
            case "created_at": createdAt = reader.time(); return createdAt != nil
            default: return reader.skipValue()
            }
        }
        guard read, let stars, let createdAt else { return nil }
        return RatingGiven(stars: stars, comment: comment, createdAt: createdAt)
    }
}

extension OrderStatusChanged: JSONReadable {
    /// The status change of a lifecycle event (one reader for both: the members are the same).
    public static func read(from reader: inout JSONFastReader) -> OrderStatusChanged? {
        guard case .order(let change)? = LifecycleEvent.read(from: &reader) else { return nil }
        return change
    }
}

extension Trip.Estimate.Route: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Trip.Estimate.Route? {
        var (distance, duration, remaining): (Int?, Int?, Int?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "distance": distance = reader.integer(); return distance != nil
            case "duration": duration = reader.integer(); return duration != nil
            case "remaining_duration": remaining = reader.integer(); return remaining != nil
            default: return reader.skipValue()
            }
        }
        guard read, let distance, let duration, let remaining else { return nil }
        return Trip.Estimate.Route(distance: distance, duration: duration, remainingDuration: remaining)
    }
}

extension Trip.Estimate: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Trip.Estimate? {
        var (arriveAt, route): (Date?, Route?) = (nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "arrive_at": arriveAt = reader.time(); return arriveAt != nil
            case "route": route = Route.read(from: &reader); return route != nil
            default: return reader.skipValue()
            }
        }
        guard read, let arriveAt, let route else { return nil }
        return Trip.Estimate(arriveAt: arriveAt, route: route)
    }
}

extension TripEvent.Data: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> TripEvent.Data? {
        var (value, tripID, metadata, estimate, arrivedAt): (String?, String?, [String: JSONValue]?, Trip.Estimate?, Date?) = (nil, nil, nil, nil, nil)
        var summary: TripSummary?
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "value": value = reader.string(); return value != nil
            case "trip_id": tripID = reader.string(); return tripID != nil
            case "trip_metadata":
                return reader.optional(&metadata) { $0.members() }
            case "estimate": return reader.optional(&estimate) { Trip.Estimate.read(from: &$0) }
            case "arrived_at": return reader.optional(&arrivedAt) { $0.time() }
            case "summary": return reader.optional(&summary) { TripSummary.read(from: &$0) }
            default: return reader.skipValue()
            }
        }
        guard read, let value, let tripID else { return nil }
        return TripEvent.Data(value: value, tripID: tripID, tripMetadata: metadata, estimate: estimate, summary: summary, arrivedAt: arrivedAt)
    }
}

extension TripEvent: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> TripEvent? {
        var (type, createdAt, deviceID, version, data): (String?, Date?, String?, String?, Data?) = (nil, nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "type": type = reader.string(); return type != nil
            case "created_at": createdAt = reader.time(); return createdAt != nil
            case "device_id": deviceID = reader.string(); return deviceID != nil
            case "version": version = reader.string(); return version != nil
            case "data": data = Data.read(from: &reader); return data != nil
            default: return reader.skipValue()
            }
        }
        guard read, let type, let createdAt, let deviceID, let version, let data else { return nil }
        var event = TripEvent(createdAt: createdAt, deviceID: deviceID, data: data)
        event.type = type
        event.version = version
        return event
    }
}

extension LifecycleEvent: JSONReadable {
    /// As `init(from:)` decides: an object with `order` is a status change, one whose `data.value`
    /// is `destination_arrival` an arrival, anything else `other` (skipped, but still checked).
    /// A status change — the common event — is read in this one pass; an arrival is read again
    /// from the start once the pass has found it is one.
    public static func read(from reader: inout JSONFastReader) -> LifecycleEvent? {
        let start = reader.index
        var (order, previous, tripValue): (Order?, OrderStatus?, String?) = (nil, nil, nil)
        var seen = MemberSet()
        let scanned = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "order": order = Order.read(from: &reader); return order != nil
            // Read whatever the event: where it is not a status change, one that does not read
            // only sends the event to JSONDecoder (which ignores it there) — never a wrong value.
            case "previous_status": return reader.optional(&previous) { $0.string().flatMap(OrderStatus.init(rawValue:)) }
            case "data":
                var inner = MemberSet()
                return reader.object { reader, key in
                    guard inner.first(key) else { return false }
                    guard key == "value" else { return reader.skipValue() }
                    tripValue = reader.string()
                    return tripValue != nil
                }
            default: return reader.skipValue()
            }
        }
        guard scanned else { return nil }
        if let order { return .order(OrderStatusChanged(order: order, previousStatus: previous)) }
        // `init(from:)` reads `data` as an object with a string `value` whenever there is no `order`.
        if seen.contains("data"), tripValue == nil { return nil }
        guard tripValue == "destination_arrival" else { return .other }
        let end = reader.index
        reader.index = start
        guard let arrival = TripEvent.read(from: &reader), reader.index == end else { return nil }
        return .arrival(arrival)
    }
}

// Trips: the replies of `trips.create` / `trips.complete` (the orders reactor) and the documents
// ride-trips reads back from its store.

extension GeoJSONPoint: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> GeoJSONPoint? {
        var (type, coordinates): (String?, [Double]?) = (nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "type": type = reader.string(); return type != nil
            case "coordinates": coordinates = reader.numbers(); return coordinates != nil
            default: return reader.skipValue()
            }
        }
        guard read, type == "Point", let coordinates, coordinates.count == 2 else { return nil }
        let point = GeoPoint(latitude: coordinates[1], longitude: coordinates[0])
        return point.isValid ? GeoJSONPoint(point) : nil
    }
}

extension Trip.Destination: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Trip.Destination? {
        var (geometry, radius, address, arrivedAt): (GeoJSONPoint?, Double?, String?, Date?) = (nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "geometry": geometry = GeoJSONPoint.read(from: &reader); return geometry != nil
            case "radius": radius = reader.number(); return radius != nil
            case "address": return reader.optional(&address) { $0.string() }
            case "arrived_at": return reader.optional(&arrivedAt) { $0.time() }
            default: return reader.skipValue()
            }
        }
        guard read, let geometry, let radius else { return nil }
        return Trip.Destination(geometry: geometry, radius: radius, address: address, arrivedAt: arrivedAt)
    }
}

/// `trips.create`, asked twice per ride by the orders reactor.
extension CreateTripParams: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> CreateTripParams? {
        var (deviceID, destination, metadata, idempotencyKey): (String?, Destination?, [String: JSONValue]?, String?) = (nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "device_id": deviceID = reader.string(); return deviceID != nil
            case "destination": destination = Destination.read(from: &reader); return destination != nil
            case "metadata": return reader.optional(&metadata) { $0.members() }
            case "idempotency_key": return reader.optional(&idempotencyKey) { $0.string() }
            default: return reader.skipValue()
            }
        }
        guard read, let deviceID, let destination else { return nil }
        return CreateTripParams(deviceID: deviceID, destination: destination, metadata: metadata, idempotencyKey: idempotencyKey)
    }
}

extension CreateTripParams.Destination: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> CreateTripParams.Destination? {
        var (geometry, radius, address): (GeoJSONPoint?, Double?, String?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "geometry": geometry = GeoJSONPoint.read(from: &reader); return geometry != nil
            case "radius": return reader.optional(&radius) { $0.number() }
            case "address": return reader.optional(&address) { $0.string() }
            default: return reader.skipValue()
            }
        }
        guard read, let geometry else { return nil }
        return CreateTripParams.Destination(geometry: geometry, radius: radius, address: address)
    }
}

extension Trip.Views: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Trip.Views? {
        var shareURL: String?
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            guard key == "share_url" else { return reader.skipValue() }
            shareURL = reader.string()
            return shareURL != nil
        }
        guard read, let shareURL else { return nil }
        return Trip.Views(shareURL: shareURL)
    }
}

extension TripSummary.Marker: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> TripSummary.Marker? {
        var (type, recordedAt, location): (String?, Date?, GeoJSONPoint?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "type": type = reader.string(); return type != nil
            case "recorded_at": recordedAt = reader.time(); return recordedAt != nil
            case "location": location = GeoJSONPoint.read(from: &reader); return location != nil
            default: return reader.skipValue()
            }
        }
        guard read, let type, let recordedAt, let location else { return nil }
        return TripSummary.Marker(type: type, recordedAt: recordedAt, location: location)
    }
}

extension TripSummary: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> TripSummary? {
        var (lineType, coordinates, markers): (String?, [[Double]]?, [Marker]?) = (nil, nil, nil)
        var (distance, duration, startedAt, completedAt, deviceID): (Int?, Int?, Date?, Date?, String?) = (nil, nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "locations":
                var inner = MemberSet()
                return reader.object { reader, key in
                    guard inner.first(key) else { return false }
                    switch key {
                    case "type": lineType = reader.string(); return lineType != nil
                    case "coordinates": coordinates = reader.elements { $0.numbers() }; return coordinates != nil
                    default: return reader.skipValue()
                    }
                }
            case "markers": markers = reader.elements { Marker.read(from: &$0) }; return markers != nil
            case "distance": distance = reader.integer(); return distance != nil
            case "duration": duration = reader.integer(); return duration != nil
            case "started_at": startedAt = reader.time(); return startedAt != nil
            case "completed_at": completedAt = reader.time(); return completedAt != nil
            case "device_id": deviceID = reader.string(); return deviceID != nil
            default: return reader.skipValue()
            }
        }
        guard read, let lineType, let coordinates, let markers, let distance, let duration, let startedAt, let completedAt, let deviceID else { return nil }
        var locations = LineString(coordinates: coordinates)
        locations.type = lineType
        return TripSummary(locations: locations, distance: distance, duration: duration, startedAt: startedAt, completedAt: completedAt,
                           deviceID: deviceID, markers: markers)
    }
}

extension Trip: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Trip? {
        var (tripID, shareID, deviceID, status, startedAt): (String?, String?, String?, Status?, Date?) = (nil, nil, nil, nil, nil)
        var (views, destination, completedAt, estimate, summary): (Views?, Destination?, Date?, Estimate?, TripSummary?) = (nil, nil, nil, nil, nil)
        var metadata: [String: JSONValue]?
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "trip_id": tripID = reader.string(); return tripID != nil
            case "share_id": shareID = reader.string(); return shareID != nil
            case "device_id": deviceID = reader.string(); return deviceID != nil
            case "status": status = reader.string().flatMap(Status.init(rawValue:)); return status != nil
            case "started_at": startedAt = reader.time(); return startedAt != nil
            case "views": views = Views.read(from: &reader); return views != nil
            case "destination": destination = Destination.read(from: &reader); return destination != nil
            case "completed_at": return reader.optional(&completedAt) { $0.time() }
            case "estimate": return reader.optional(&estimate) { Estimate.read(from: &$0) }
            case "summary": return reader.optional(&summary) { TripSummary.read(from: &$0) }
            case "metadata": return reader.optional(&metadata) { $0.members() }
            default: return reader.skipValue()
            }
        }
        guard read, let tripID, let shareID, let deviceID, let status, let startedAt, let views, let destination else { return nil }
        var trip = Trip(tripID: tripID, shareID: shareID, deviceID: deviceID, status: status, startedAt: startedAt, completedAt: completedAt,
                        destination: destination, estimate: estimate, summary: summary, metadata: metadata)
        trip.views = views
        return trip
    }
}

extension Caller: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> Caller? {
        var (role, id): (UserRole?, String?) = (nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "role": role = reader.string().flatMap(UserRole.init(rawValue:)); return role != nil
            case "id": id = reader.string(); return id != nil
            default: return reader.skipValue()
            }
        }
        guard read, let role, let id else { return nil }
        return Caller(role: role, id: id)
    }
}

/// `accept`, `start_ride`, `end_ride` (and the other ops on one order), three a ride.
extension OrderParams: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> OrderParams? {
        var (caller, id, reason): (Caller?, String?, String?) = (nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "caller": caller = Caller.read(from: &reader); return caller != nil
            case "id": id = reader.string(); return id != nil
            case "reason": return reader.optional(&reason) { $0.string() }
            default: return reader.skipValue()
            }
        }
        guard read, let caller, let id else { return nil }
        return OrderParams(caller: caller, id: id, reason: reason)
    }
}

extension CreateOrderParams: JSONReadable {
    public static func read(from reader: inout JSONFastReader) -> CreateOrderParams? {
        var (caller, pickup, dropoff, pickupPlaceID, dropoffPlaceID): (Caller?, Place?, Place?, String?, String?) = (nil, nil, nil, nil, nil)
        var seen = MemberSet()
        let read = reader.object { reader, key in
            guard seen.first(key) else { return false }
            switch key {
            case "caller": caller = Caller.read(from: &reader); return caller != nil
            case "pickup": return reader.optional(&pickup) { Place.read(from: &$0) }
            case "dropoff": return reader.optional(&dropoff) { Place.read(from: &$0) }
            case "pickup_place_id": return reader.optional(&pickupPlaceID) { $0.string() }
            case "dropoff_place_id": return reader.optional(&dropoffPlaceID) { $0.string() }
            default: return reader.skipValue()
            }
        }
        guard read, let caller else { return nil }
        return CreateOrderParams(caller: caller, pickup: pickup, dropoff: dropoff, pickupPlaceID: pickupPlaceID, dropoffPlaceID: dropoffPlaceID)
    }
}
