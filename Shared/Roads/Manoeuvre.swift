import Foundation
import Geo

/// What a driver does where a step of a route begins: set off, turn (by how much, which way), keep
/// straight, or arrive — read from the line's own bends, so every provider's route has them.
public enum Manoeuvre: String, Sendable, Equatable, Codable, CaseIterable {
    case depart
    case straight
    case slightLeft = "slight_left"
    case left
    case sharpLeft = "sharp_left"
    case slightRight = "slight_right"
    case right
    case sharpRight = "sharp_right"
    case uTurn = "u_turn"
    case arrive

    /// The turn from heading `incoming` to heading `outgoing` (degrees clockwise from north):
    /// under 20° straight, under 60° slight, under 135° a turn, under 170° sharp, else a U-turn.
    public static func turn(from incoming: Double, to outgoing: Double) -> Manoeuvre {
        var change = (outgoing - incoming).truncatingRemainder(dividingBy: 360)
        if change > 180 { change -= 360 }
        if change <= -180 { change += 360 }
        let size = abs(change)
        switch size {
        case ..<20: return .straight
        case ..<60: return change > 0 ? .slightRight : .slightLeft
        case ..<135: return change > 0 ? .right : .left
        case ..<170: return change > 0 ? .sharpRight : .sharpLeft
        default: return .uTurn
        }
    }

    /// The manoeuvre where the line's point `index` is passed: `depart` at the first point,
    /// `arrive` at the last, else the turn between the headings `lookaround` metres either side
    /// of it (a bend drawn with several short segments reads as one turn).
    /// `distances`: metres from the start to each point (`Route.timeline`).
    public static func at(_ index: Int, of line: Polyline, distances: [Double], lookaround: Double = 15) -> Manoeuvre {
        let points = line.points
        guard index > 0 else { return .depart }
        guard index < points.count - 1, index < distances.count else { return .arrive }
        let along = distances[index]
        let before = line.point(atDistance: max(0, along - lookaround))
        let after = line.point(atDistance: min(line.length, along + lookaround))
        let corner = points[index]
        guard before.distance(to: corner) > 0.5, corner.distance(to: after) > 0.5 else { return .straight }
        return turn(from: before.bearing(to: corner), to: corner.bearing(to: after))
    }
}
