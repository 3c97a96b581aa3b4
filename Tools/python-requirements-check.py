#!/usr/bin/env python3
"""Exit 0 when every pin of Tools/python-requirements.txt is installed at its version, else name
the first that is not and exit 1 (make test-deps then installs them)."""
import importlib.metadata
import pathlib
import sys

for line in (pathlib.Path(__file__).parent / "python-requirements.txt").read_text().splitlines():
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, version = line.split("==")
    try:
        installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != version:
        print(f"{name}: {installed or 'not installed'}, tested with {version}", file=sys.stderr)
        sys.exit(1)
