#!/usr/bin/env python3
"""Builds the embedded road graph (docs/roads.md) from an OpenStreetMap extract.

    Tools/roads/build-graph.py IN.osm.pbf OUT.roads
    Tools/roads/build-graph.py --ways IN.osm.pbf OUT.tsv      # the rules per way, for the pgRouting import
    Tools/roads/build-graph.py --mapconfig OUT.xml            # osm2pgrouting's mapconfig of the same classes

The drivable classes and their default speeds are Tools/roads/road-classes.tsv. Reads the extract with osmium-tool (tags-filter, then OPL on a pipe) and the standard library
only. The output is byte-for-byte deterministic: ids sorted, no timestamps, integer coordinates.
"""
import math
import os
import re
import struct
import subprocess
import sys
import zlib

MAGIC = b"RIDEROAD"
VERSION = 1
EARTH_RADIUS = 6_371_008.8  # Earth.meanRadius in Shared/Geo

CLASSES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "road-classes.tsv")


def read_classes(path=CLASSES):
    """{highway: km/h} from road-classes.tsv: the drivable highway types and the car's speed on
    each when a way has no usable maxspeed (service roads are not among them)."""
    speeds = {}
    with open(path, encoding="utf-8") as table:
        for line in table:
            if line.strip() and not line.startswith("#"):
                highway, kmh = line.split()
                speeds[highway] = int(kmh)
    return speeds


DEFAULT_SPEEDS = read_classes()
# Finnish (and a few common) implicit limits: maxspeed=FI:urban and the like.
ZONE_SPEEDS = {"urban": 50, "rural": 80, "motorway": 120, "living_street": 20, "trunk": 100}
BLOCKED_ACCESS = {"no", "private"}


def unescape(text):
    """OPL writes %xx% for a tag's special characters (space, comma, equals, percent)."""
    return re.sub(r"%([0-9a-fA-F]+)%", lambda m: chr(int(m.group(1), 16)), text)


def parse_tags(field):
    tags = {}
    if field:
        for pair in field.split(","):
            key, _, value = pair.partition("=")
            tags[unescape(key)] = unescape(value)
    return tags


def fixed(degrees):
    """'60.1643249' -> 601643249 without passing through a float (exact, platform-independent)."""
    negative = degrees.startswith("-")
    whole, _, fraction = degrees.lstrip("-").partition(".")
    value = int(whole) * 10_000_000 + int((fraction + "0000000")[:7])
    return -value if negative else value


def speed(tags):
    """km/h: the first number of maxspeed (mph converted), a zone, else the highway's default."""
    raw = tags.get("maxspeed", "").strip().lower()
    match = re.match(r"^(\d+(?:\.\d+)?)\s*(mph|km/h|kmh)?", raw)
    if match:
        value = float(match.group(1)) * (1.609344 if match.group(2) == "mph" else 1)
        if value >= 5:
            return min(int(round(value)), 130)
    zone = raw.split(":", 1)[1] if ":" in raw else raw
    if zone in ZONE_SPEEDS:
        return ZONE_SPEEDS[zone]
    if raw == "walk":
        return 10
    return DEFAULT_SPEEDS[tags["highway"]]


def direction(tags):
    """+1 forward only, -1 backward only, 0 both ways, None not drivable (reversible lanes)."""
    oneway = tags.get("oneway", "").lower()
    if oneway in ("yes", "true", "1"):
        return 1
    if oneway in ("-1", "reverse"):
        return -1
    if oneway in ("no", "false", "0"):
        return 0
    if oneway in ("reversible", "alternating"):
        return None
    if tags.get("junction") in ("roundabout", "circular") or tags["highway"] in ("motorway", "motorway_link"):
        return 1
    return 0


def drivable(tags):
    if tags.get("highway") not in DEFAULT_SPEEDS or tags.get("area") == "yes":
        return False
    car = tags.get("motorcar", tags.get("motor_vehicle", tags.get("vehicle", tags.get("access", "yes"))))
    return car not in BLOCKED_ACCESS


def distance(a, b):
    """Haversine metres between two fixed-point (lat, lon) pairs, like GeoPoint.distance(to:)."""
    lat1, lon1, lat2, lon2 = (math.radians(v / 10_000_000) for v in (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS * math.asin(min(1.0, math.sqrt(h)))


def osmium(extract, args, data=None):
    """osmium's output; a damaged extract ends the script with osmium's own words, not a traceback."""
    run = subprocess.run(["osmium", *args], input=data, capture_output=True)
    if run.returncode != 0:
        said = run.stderr.decode("utf-8", "replace").strip() or f"exit {run.returncode}"
        sys.exit(f"osmium could not read {extract}: {said} (a damaged or truncated extract?)")
    return run.stdout


def read(extract):
    """(nodes {id: (lat, lon)}, ways [(id, tags, [node ids])]) of the drivable ways."""
    highways = ",".join(sorted(DEFAULT_SPEEDS))
    filtered = osmium(extract, ["tags-filter", "--no-progress", "-F", "pbf", "-f", "pbf", "-o", "-", extract, f"w/highway={highways}"])
    opl = osmium(extract, ["cat", "--no-progress", "-F", "pbf", "-f", "opl,add_metadata=false", "-o", "-"], filtered).decode("utf-8")
    nodes, ways = {}, []
    for line in opl.splitlines():
        fields = {f[0]: f[1:] for f in line.split(" ")[1:] if f}
        if line.startswith("n") and fields.get("x") and fields.get("y"):
            nodes[int(line.split(" ")[0][1:])] = (fixed(fields["y"]), fixed(fields["x"]))
        elif line.startswith("w"):
            tags = parse_tags(fields.get("T", ""))
            refs = [int(r[1:]) for r in fields.get("N", "").split(",") if r]
            if drivable(tags):
                ways.append((int(line.split(" ")[0][1:]), tags, refs))
    return nodes, sorted(ways, key=lambda w: w[0])


def directed_edges(nodes, ways):
    """[(from id, to id, length m, km/h, name)] — a way cut where the extract lost a node."""
    edges = []
    for _, tags, refs in ways:
        way_direction = direction(tags)
        if way_direction is None:
            continue
        kmh, name = speed(tags), tags.get("name") or None
        for a, b in zip(refs, refs[1:]):
            if a not in nodes or b not in nodes or a == b:
                continue
            length = distance(nodes[a], nodes[b])
            if way_direction >= 0:
                edges.append((a, b, length, kmh, name))
            if way_direction <= 0:
                edges.append((b, a, length, kmh, name))
    return edges


def largest_component(edges):
    """Node ids of the largest strongly connected component (Kosaraju, iterative): a clipped
    extract leaves one-way stubs and islands at its border, from which no route comes back."""
    forward, backward = {}, {}
    for a, b, *_ in edges:
        forward.setdefault(a, []).append(b)
        backward.setdefault(b, []).append(a)
    order, seen = [], set()
    for root in sorted(set(forward) | set(backward)):
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(forward.get(root, [])))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                order.append(node)
                stack.pop()
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(forward.get(child, []))))
    best, assigned = set(), set()
    for root in reversed(order):
        if root in assigned:
            continue
        component, stack = {root}, [root]
        assigned.add(root)
        while stack:
            for parent in backward.get(stack.pop(), []):
                if parent not in assigned:
                    assigned.add(parent)
                    component.add(parent)
                    stack.append(parent)
        if len(component) > len(best) or (len(component) == len(best) and min(component) < min(best)):
            best = component
    return best


def encode(nodes, edges):
    keep = largest_component(edges)
    ids = sorted(keep)
    index = {node: i for i, node in enumerate(ids)}
    names = sorted({e[4] for e in edges if e[4] and e[0] in keep and e[1] in keep})
    name_index = {name: i + 1 for i, name in enumerate(names)}  # 0: no name
    rows = sorted(
        (index[a], index[b], int(round(length * 100)), kmh, name_index.get(name, 0))
        for a, b, length, kmh, name in edges if a in keep and b in keep)
    rows = [row for i, row in enumerate(rows) if i == 0 or rows[i - 1] != row]  # a way drawn twice
    body = bytearray()
    for node in ids:
        body += struct.pack("<ii", *nodes[node])
    for source, target, centimetres, kmh, name in rows:
        body += struct.pack("<IIIHBB", source, target, centimetres, name, kmh, 0)
    for name in names:
        encoded = name.encode("utf-8")
        body += struct.pack("<H", len(encoded)) + encoded
    header = MAGIC + struct.pack("<IIIIII", VERSION, len(ids), len(rows), len(names), len(body), zlib.crc32(body))
    return bytes(header + body), len(ids), len(rows), len(names)


def way_rules(ways):
    """[(way id, km/h forwards or 0, km/h backwards or 0)] of the ways the graph drives: what the
    pgRouting import applies to osm2pgrouting's edges, so that both networks are the same."""
    rules = []
    for way_id, tags, _ in ways:
        way_direction = direction(tags)
        if way_direction is None:
            continue
        kmh = speed(tags)
        rules.append((way_id, kmh if way_direction >= 0 else 0, kmh if way_direction <= 0 else 0))
    return rules


def mapconfig():
    """osm2pgrouting's mapconfig of the drivable classes, each at its default speed. Which ways are
    kept and their speeds are then set from way_rules; this only makes osm2pgrouting read them."""
    # No comment in it: osm2pgrouting's parser refuses one.
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<configuration>", '  <tag_name name="highway" id="1">']
    for number, (highway, kmh) in enumerate(DEFAULT_SPEEDS.items(), start=101):
        lines.append(f'    <tag_value name="{highway}" id="{number}" priority="1.0" maxspeed="{kmh}" />')
    lines += ["  </tag_name>", "</configuration>", ""]
    return "\n".join(lines)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--mapconfig":
        with open(sys.argv[2], "w", encoding="utf-8") as out:
            out.write(mapconfig())
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--ways":
        _, ways = read(sys.argv[2])
        with open(sys.argv[3], "w", encoding="utf-8") as out:
            out.writelines(f"{way_id}\t{forward}\t{backward}\n" for way_id, forward, backward in way_rules(ways))
        return
    if len(sys.argv) != 3:
        sys.exit("usage: build-graph.py IN.osm.pbf OUT.roads | --ways IN.osm.pbf OUT.tsv | --mapconfig OUT.xml")
    nodes, ways = read(sys.argv[1])
    data, node_count, edge_count, name_count = encode(nodes, directed_edges(nodes, ways))
    with open(sys.argv[2], "wb") as out:
        out.write(data)
    print(f"build-graph: {sys.argv[2]}: {node_count} nodes, {edge_count} edges, {name_count} names, {len(data)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
