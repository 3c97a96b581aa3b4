#!/usr/bin/env python3
"""Builds Shared/Places/Data/helsinki.places from the OpenStreetMap extract (docs/places.md).

    Tools/roads/build-places.py [EXTRACT.osm.pbf] [OUT] [AREA]

Reads the extract with osmium-tool (`osmium export`, one GeoJSON feature per line) and writes
named streets, addresses and named places as sorted tab-separated lines under a header that
carries their count and an FNV-1a 64 checksum of the body. No timestamps, no set or dict order:
the same extract gives the same bytes, which PlacesTests checks.
"""

import json
import math
import os
import subprocess
import sys
import tempfile

FORMAT = "ride-places 1"
AREA = "Helsinki"
# Roads a rider names as a street; platforms, bus stops and the like are places instead.
STREET_HIGHWAYS = {
    "motorway", "trunk", "primary", "secondary", "tertiary", "unclassified", "residential",
    "living_street", "pedestrian", "service", "road", "footway", "cycleway", "path", "steps",
    "track", "motorway_link", "trunk_link", "primary_link", "secondary_link", "tertiary_link",
}
# Keys whose named features are places, in the order that names a place's category.
PLACE_KEYS = ["amenity", "shop", "tourism", "railway", "public_transport", "leisure", "historic",
              "office", "craft", "healthcare", "place", "building"]
PLACE_VALUES = {"railway": {"station", "halt", "tram_stop", "subway_entrance"},
                "public_transport": {"station"}}
PLACE_MERGE_M = 100.0  # one place's features closer than this are one entry
TRACK_SPACING_M = 50.0  # points along a street for the reverse look-up's fallback


def metres(a, b):
    """Equirectangular distance: exact enough over a few kilometres."""
    lat = math.radians((a[1] + b[1]) / 2)
    dx = math.radians(b[0] - a[0]) * math.cos(lat) * 6371008.8
    dy = math.radians(b[1] - a[1]) * 6371008.8
    return math.hypot(dx, dy)


def line_length(coords):
    return sum(metres(coords[i], coords[i + 1]) for i in range(len(coords) - 1))


def point_along(coords, distance):
    for i in range(len(coords) - 1):
        step = metres(coords[i], coords[i + 1])
        if distance <= step and step > 0:
            t = distance / step
            return (coords[i][0] + t * (coords[i + 1][0] - coords[i][0]),
                    coords[i][1] + t * (coords[i + 1][1] - coords[i][1]))
        distance -= step
    return tuple(coords[-1])


def ring_centroid(ring):
    """The area centroid of a ring, or its vertices' mean when it has no area."""
    area = cx = cy = 0.0
    for i in range(len(ring) - 1):
        x0, y0 = ring[i]
        x1, y1 = ring[i + 1]
        cross = x0 * y1 - x1 * y0
        area += cross
        cx += (x0 + x1) * cross
        cy += (y0 + y1) * cross
    if abs(area) < 1e-14:
        pts = ring[:-1] or ring
        return (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)), 0.0
    return (cx / (3 * area), cy / (3 * area)), abs(area) / 2


def representative(geometry):
    kind, coords = geometry["type"], geometry["coordinates"]
    if kind == "Point":
        return tuple(coords)
    if kind == "LineString":
        return point_along(coords, line_length(coords) / 2)
    if kind == "MultiPolygon":
        best = max((ring_centroid(polygon[0]) for polygon in coords), key=lambda c: c[1])
        return best[0]
    return None


def clean(text):
    return " ".join((text or "").replace("\t", " ").split())


def fmt(point):
    return "%.6f" % point[1], "%.6f" % point[0]


def features(extract):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "features.geojsonseq")
        run = subprocess.run(["osmium", "export", "--no-progress", "-f", "geojsonseq", "--add-unique-id=type_id",
                              "-o", out, "-O", extract], capture_output=True)
        if run.returncode != 0:
            said = run.stderr.decode("utf-8", "replace").strip() or f"exit {run.returncode}"
            sys.exit(f"osmium could not read {extract}: {said} (a damaged or truncated extract?)")
        with open(out, encoding="utf-8") as f:
            for line in f:
                line = line.strip().lstrip("\x1e")
                if line:
                    yield json.loads(line)


def category(tags):
    for key in PLACE_KEYS:
        value = tags.get(key)
        if value and (key not in PLACE_VALUES or value in PLACE_VALUES[key]):
            return "%s=%s" % (key, clean(value))
    return None


def build(extract):
    streets = {}  # name -> {"alt": set, "ways": [(length, id, coords)]}
    addresses = {}  # (street, number) -> [(is_node, id, point)]
    places = {}  # (name, alt, category, street, number) -> [(is_area, id, point)]
    for feature in features(extract):
        tags, geometry, fid = feature["properties"], feature["geometry"], feature["id"]
        name = clean(tags.get("name"))
        alt = clean(tags.get("name:sv"))
        if alt == name:
            alt = ""
        if geometry["type"] == "LineString" and name and tags.get("highway") in STREET_HIGHWAYS:
            entry = streets.setdefault(name, {"alt": set(), "ways": []})
            if alt:
                entry["alt"].add(alt)
            coords = geometry["coordinates"]
            entry["ways"].append((line_length(coords), fid, coords))
            continue
        point = representative(geometry)
        if point is None:
            continue
        street, number = clean(tags.get("addr:street")), clean(tags.get("addr:housenumber"))
        if street and number:
            addresses.setdefault((street, number), []).append((geometry["type"] != "Point", fid, point))
        kind = category(tags)
        if name and kind:
            key = (name, alt, kind, street if number else "", number if street else "")
            places.setdefault(key, []).append((geometry["type"] != "Point", fid, point))

    lines = []
    for name in sorted(streets):
        entry = streets[name]
        longest = max(entry["ways"], key=lambda w: (w[0], w[1]))
        middle = point_along(longest[2], longest[0] / 2)
        lines.append(("S",) + fmt(middle) + (name, ",".join(sorted(entry["alt"])), "", "", ""))
        track = set()
        for length, _, coords in entry["ways"]:
            steps = max(1, int(math.ceil(length / TRACK_SPACING_M)))
            for i in range(steps + 1):
                track.add(fmt(point_along(coords, length * i / steps)))
        for lat, lon in sorted(track):
            lines.append(("T", lat, lon, name, "", "", "", ""))
    for (street, number), candidates in sorted(addresses.items()):
        # An address tagged on the building and on its entrance is one address: the building's.
        _, _, point = sorted(candidates, key=lambda c: (not c[0], c[1]))[0]
        lines.append(("A",) + fmt(point) + ("", "", street, number, ""))
    for (name, alt, kind, street, number), candidates in sorted(places.items()):
        # A place mapped twice (its node and its building) is one place; the same name far away is another.
        kept = []
        for _, _, point in sorted(candidates, key=lambda c: (not c[0], c[1])):
            if all(metres(point, other) > PLACE_MERGE_M for other in kept):
                kept.append(point)
        for point in kept:
            lines.append(("P",) + fmt(point) + (name, alt, street, number, kind))
    lines.sort(key=lambda l: ("STAP".index(l[0]),) + l[3:] + l[1:3])
    return "".join("\t".join(l) + "\n" for l in lines)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    extract = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/roads/Helsinki.osm.pbf")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "Shared/Places/Data/helsinki.places")
    area = sys.argv[3] if len(sys.argv) > 3 else AREA
    body = build(extract).encode("utf-8")
    count = body.count(b"\n")
    header = "%s\narea %s\ncount %d\nfnv1a64 %s\n\n" % (FORMAT, area, count, fnv1a64(body))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        f.write(header.encode("utf-8") + body)
    print("%s: %d entries" % (out, count))


if __name__ == "__main__":
    main()
