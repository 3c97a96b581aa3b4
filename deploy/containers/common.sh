# Sourced by the scripts here: how they say they cannot run, and the names they share.
# A script that finds containers cannot run on this machine prints one line saying why and exits
# with SKIP (77): `make test-containers` reports it and passes; anything else non-zero is a failure.
SKIP=77
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

# The images the scripts make when no registry gives the official ones (kept in podman's store,
# so a machine makes them once).
# The build image is named after this machine's toolchain (it runs that toolchain, mounted).
SWIFT_VERSION="$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -n 1)"
SWIFT_BUILD_IMAGE="${SWIFT_BUILD_IMAGE:-localhost/ride-swift-build:${SWIFT_VERSION:-6.3}-bookworm}"
RUNTIME_BASE_IMAGE="${RUNTIME_BASE_IMAGE:-localhost/ride-debian:bookworm-slim}"
IMAGE="${IMAGE:-ridesharing:dev}"
# deploy/Dockerfile's runtime stage alone, which build-image's IMAGE_EXECUTABLES=here adds this checkout's executables to.
RUNTIME_STAGE_IMAGE="localhost/ride-runtime-stage:dev"

# Whether this machine's own build can give the image its executables (else it prints why not and
# fails): they must link against the runtime image's Debian release, and come from the toolchain
# the build image runs.
executables_here_fit() {
    local release toolchain
    release="${RUNTIME_BASE_IMAGE##*:}"
    release="${release%-slim}"
    # shellcheck disable=SC1091
    [ -r /etc/os-release ] && . /etc/os-release
    if [ "${ID:-}" != debian ] || [ "${VERSION_CODENAME:-}" != "$release" ]; then
        echo "this machine runs ${PRETTY_NAME:-an unknown system}, the image Debian $release"; return 1
    fi
    if podman image exists "$SWIFT_BUILD_IMAGE"; then
        toolchain="$(podman image inspect --format '{{index .Labels "org.ride.toolchain"}}' "$SWIFT_BUILD_IMAGE")"
        if [ "$toolchain" != "$(toolchain_root)" ]; then echo "the build image runs the toolchain at $toolchain, this machine $(toolchain_root)"; return 1; fi
    fi
    return 0
}

say() { echo "containers: $*" >&2; }
skip() { echo "containers: skipped: $*" >&2; exit "$SKIP"; }
die() { echo "containers: FAILED: $*" >&2; exit 1; }

# Runs as root, or through sudo when that needs no password.
if [ "$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo"; else SUDO="none"; fi

# Whether Docker Hub answers (401 from /v2/ is an answer: it wants a token). Asked once per run.
registry_answers() {
    if [ -z "${REGISTRY_ANSWERS:-}" ]; then
        local code
        code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 8 https://registry-1.docker.io/v2/ 2>/dev/null || true)"
        case "$code" in 200 | 401) REGISTRY_ANSWERS=yes ;; *) REGISTRY_ANSWERS=no ;; esac
        export REGISTRY_ANSWERS
    fi
    [ "$REGISTRY_ANSWERS" = yes ]
}

# The local folder git reads github.com from on this machine (an `insteadOf` of https://github.com/), if any.
package_mirror() {
    git config --get-regexp '^url\..*\.insteadof$' 2>/dev/null | awk '$2 == "https://github.com/" { sub(/^url\./, "", $1); sub(/\.insteadof$/, "", $1); print $1; exit }'
}

# The toolchain's root: two folders above the real `swift` binary (/opt/swift for /opt/swift/usr/bin/swift).
toolchain_root() {
    local swift
    swift="$(readlink -f "$(command -v swift)" 2>/dev/null)" || return 1
    [ -n "$swift" ] && dirname "$(dirname "$(dirname "$swift")")"
}

# What a build of $IMAGE left behind, removed: the image it replaced ($1, its id before the build)
# and the build stages nothing uses now (each holds a whole release build; the layers the build
# reused stay for the next one).
drop_leftovers() {
    local previous="$1" current
    current="$(podman image inspect --format '{{.Id}}' "$IMAGE")"
    if [ -n "$previous" ] && [ "$previous" != "$current" ]; then podman rmi "$previous" >/dev/null 2>&1 || true; fi
    podman image prune -f --filter label=org.ridesharing.stage=build >/dev/null 2>&1 || true
}
