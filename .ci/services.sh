# shellcheck shell=bash
# Services for the real-backend tests (impl/redis, impl/postgres,
# cmd/leasecheck verify tests). Source it from .ci/run before the tests:
#
#     . .ci/services.sh
#     leasecheck_services_start
#
# It installs redis-server and PostgreSQL 15 when missing (Debian packages),
# starts Redis on a
# free port of 127.0.0.1, runs initdb as the postgres user in a temporary
# directory and starts PostgreSQL 15 on a free port, exports
# LEASECHECK_REDIS_URL and LEASECHECK_POSTGRES_URL, and stops both (and
# removes their directories) when the shell exits. Tests that inject the
# coordinator-crash fault start servers of their own from the same
# binaries. A service that cannot be provided is reported and skipped; the
# tests then start their own or skip with the reason.

LEASECHECK_PG_BIN=${LEASECHECK_PG_BIN:-/usr/lib/postgresql/15/bin}

_lc_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

_lc_wait_port() { # host port seconds
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

leasecheck_services_stop() {
	if [ -n "${_LC_REDIS_PID:-}" ]; then
		kill "$_LC_REDIS_PID" 2>/dev/null || true
		wait "$_LC_REDIS_PID" 2>/dev/null || true
		_LC_REDIS_PID=
	fi
	if [ -n "${_LC_PG_DIR:-}" ]; then
		if [ -f "$_LC_PG_DIR/data/postmaster.pid" ]; then
			runuser -u postgres -- "$LEASECHECK_PG_BIN/pg_ctl" -D "$_LC_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
		fi
		rm -rf "$_LC_PG_DIR"
		_LC_PG_DIR=
	fi
	if [ -n "${_LC_REDIS_DIR:-}" ]; then
		rm -rf "$_LC_REDIS_DIR"
		_LC_REDIS_DIR=
	fi
}

leasecheck_services_start() {
	trap leasecheck_services_stop EXIT

	if ! command -v redis-server >/dev/null 2>&1; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null ||
			echo "services: could not install redis-server; Redis tests will skip" >&2
	fi
	if command -v redis-server >/dev/null 2>&1; then
		local port
		port=$(_lc_free_port)
		_LC_REDIS_DIR=$(mktemp -d /tmp/leasecheck-ci-redis-XXXXXX)
		redis-server --port "$port" --bind 127.0.0.1 --dir "$_LC_REDIS_DIR" --save '' \
			--appendonly yes --appendfsync always --daemonize no >"$_LC_REDIS_DIR/log" 2>&1 &
		_LC_REDIS_PID=$!
		if _lc_wait_port 127.0.0.1 "$port" 15; then
			export LEASECHECK_REDIS_URL="redis://127.0.0.1:$port"
			echo "services: redis-server on 127.0.0.1:$port"
		else
			echo "services: redis-server did not start:" >&2
			cat "$_LC_REDIS_DIR/log" >&2
		fi
	fi

	if [ ! -x "$LEASECHECK_PG_BIN/postgres" ]; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null ||
			echo "services: could not install postgresql-15; PostgreSQL tests will skip" >&2
	fi
	if [ -x "$LEASECHECK_PG_BIN/postgres" ] && id postgres >/dev/null 2>&1; then
		local pgport
		pgport=$(_lc_free_port)
		_LC_PG_DIR=$(mktemp -d /tmp/leasecheck-ci-pg-XXXXXX)
		chown postgres: "$_LC_PG_DIR"
		if runuser -u postgres -- "$LEASECHECK_PG_BIN/initdb" -D "$_LC_PG_DIR/data" -U postgres \
			--auth=trust --no-sync -E UTF8 >"$_LC_PG_DIR/initdb.log" 2>&1 &&
			runuser -u postgres -- "$LEASECHECK_PG_BIN/pg_ctl" -D "$_LC_PG_DIR/data" -l "$_LC_PG_DIR/log" -w -t 30 \
				-o "-p $pgport -c listen_addresses=127.0.0.1 -c unix_socket_directories=$_LC_PG_DIR -c fsync=off" \
				start >/dev/null; then
			export LEASECHECK_POSTGRES_URL="postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable"
			echo "services: postgres on 127.0.0.1:$pgport"
		else
			echo "services: PostgreSQL did not start:" >&2
			cat "$_LC_PG_DIR"/*.log "$_LC_PG_DIR/log" >&2 2>/dev/null || true
		fi
	else
		echo "services: no PostgreSQL in $LEASECHECK_PG_BIN (or no postgres user); PostgreSQL tests will skip" >&2
	fi
}
