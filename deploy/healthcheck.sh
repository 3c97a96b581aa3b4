#!/bin/sh
# The image's HEALTHCHECK (deploy/Dockerfile): asks `ridectl health` for the /readyz of the platform
# process this container runs, on the port that process listens on: its --http flag, else
# RIDE_HTTP_ADDR, else its executable's default (ride-bus 9100, users 9101, orders 9102, trips 9103,
# tracking 9104, notifications 9105, gateway 9106). RIDE_HEALTH_URL, when set, is asked instead.
# docker-compose.yml and the Kubernetes probes name each service's URL themselves.
set -eu
url="${RIDE_HEALTH_URL:-}"
if [ -z "$url" ]; then
    found=""
    # PID 1, or the first ride-* process after it (an init such as `docker run --init` in front).
    for pid in 1 $(ls /proc | grep -E '^[0-9]+$' | sort -n); do
        [ -r "/proc/$pid/cmdline" ] || continue
        name="$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -n 1)"
        case "${name##*/}" in ride-*) found="$pid"; break ;; esac
    done
    [ -n "$found" ] || { echo "ride-healthcheck: no ride-* process runs in this container" >&2; exit 1; }
    service="${name##*/}"
    address="$(tr '\0' '\n' <"/proc/$found/cmdline" | awk 'take { print; exit } $0 == "--http" { take = 1 } /^--http=/ { sub(/^--http=/, ""); print; exit }')"
    [ -n "$address" ] || address="$(tr '\0' '\n' <"/proc/$found/environ" 2>/dev/null | sed -n 's/^RIDE_HTTP_ADDR=//p' | head -n 1)"
    if [ -z "$address" ]; then
        case "$service" in
            ride-bus) address=:9100 ;; ride-users) address=:9101 ;; ride-orders) address=:9102 ;; ride-trips) address=:9103 ;;
            ride-tracking) address=:9104 ;; ride-notifications) address=:9105 ;; ride-gateway) address=:9106 ;;
            *) echo "ride-healthcheck: $service has no known health port: set RIDE_HEALTH_URL" >&2; exit 1 ;;
        esac
    fi
    host="${address%:*}"
    case "$host" in "" | 0.0.0.0 | "*") host=127.0.0.1 ;; "[::]" | "::") host="[::1]" ;; esac
    url="http://$host:${address##*:}/readyz"
fi
exec ridectl health --timeout-ms 2500 "$url"
