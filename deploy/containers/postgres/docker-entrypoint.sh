#!/usr/bin/env bash
# The official postgres image's entrypoint contract, for the stand-in image (Containerfile beside it).
set -Eeuo pipefail

# VAR or VAR_FILE (not both), as the official image reads its settings.
file_env() {
    local var="$1" file_var="${1}_FILE" default="${2:-}"
    if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
        echo >&2 "error: both $var and $file_var are set (but are exclusive)"; exit 1
    fi
    local value="$default"
    if [ -n "${!var:-}" ]; then value="${!var}"; elif [ -n "${!file_var:-}" ]; then
        [ -r "${!file_var}" ] || { echo >&2 "error: $file_var: cannot read ${!file_var}"; exit 1; }
        value="$(<"${!file_var}")"
    fi
    export "$var"="$value"
    unset "$file_var"
}

# `docker run postgres:15 -c fsync=off` means the server with those flags.
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi

if [ "$1" = postgres ]; then
    if [ "$(id -u)" = 0 ]; then
        mkdir -p "$PGDATA" /var/run/postgresql
        chown postgres:postgres "$PGDATA" /var/run/postgresql
        chmod 700 "$PGDATA"
        exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
    fi
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        file_env POSTGRES_PASSWORD
        file_env POSTGRES_USER postgres
        file_env POSTGRES_DB "$POSTGRES_USER"
        file_env POSTGRES_INITDB_ARGS
        : "${POSTGRES_HOST_AUTH_METHOD:=}"
        if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
            echo >&2 "error: database is uninitialized and superuser password is not specified."
            echo >&2 "       Set POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE), or POSTGRES_HOST_AUTH_METHOD=trust."
            exit 1
        fi
        # shellcheck disable=SC2086
        initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS >/dev/null
        auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
        printf '\nhost all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
        # The database and the init scripts, on a server that listens on its socket only.
        pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start >/dev/null
        export PGPASSWORD="$POSTGRES_PASSWORD"
        psql=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc --dbname postgres)
        if [ "$POSTGRES_DB" != postgres ]; then
            "${psql[@]}" --set db="$POSTGRES_DB" -q <<<'CREATE DATABASE :"db";'
        fi
        psql+=(--dbname "$POSTGRES_DB")
        for f in /docker-entrypoint-initdb.d/*; do
            case "$f" in
                *.sh) echo "running $f"; if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
                *.sql) echo "running $f"; "${psql[@]}" -f "$f" ;;
                *.sql.gz) echo "running $f"; gunzip -c "$f" | "${psql[@]}" ;;
                *) ;;
            esac
        done
        unset PGPASSWORD
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
        echo "PostgreSQL init process complete; ready for start up."
    fi
    set -- "$@" -c listen_addresses='*'
fi
exec "$@"
