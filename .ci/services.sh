# shellcheck shell=bash
# Services for the real-backend tests (internal/impl/redis, internal/impl/postgres,
# internal/impl/zookeeper, internal/impl/etcd, cmd/leasecheck verify tests). Source it from
# .ci/run before the tests:
#
#     . .ci/services.sh
#     leasecheck_services_start
#
# It installs what is missing (Debian packages: redis-server,
# postgresql-15, zookeeper, etcd-server), and starts, each on a free port
# of 127.0.0.1 with a temporary directory:
#
#   - redis-server                      LEASECHECK_REDIS_URL=redis://127.0.0.1:PORT
#   - PostgreSQL 15 (initdb as postgres) LEASECHECK_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
#   - ZooKeeper, standalone             LEASECHECK_ZK_ADDR=127.0.0.1:PORT
#   - etcd (3.4.23 on Debian 12)        LEASECHECK_ETCD34_ADDR=127.0.0.1:PORT
#
# and stops them all (and removes their directories) when the shell exits.
# ZooKeeper and etcd are configured as internal/servers starts them (tick
# 100 ms and sessions from 200 ms for ZooKeeper; etcd's defaults). Tests
# that inject the coordinator-crash fault start servers of their own from
# the same binaries. A service that cannot be provided is reported and
# skipped; the tests then start their own, or fail under CI=true.

LEASECHECK_PG_BIN=${LEASECHECK_PG_BIN:-/usr/lib/postgresql/15/bin}
# ZooKeeper's jars, as internal/servers.ZooKeeperClasspath lists them.
_LC_ZK_JARS="zookeeper zookeeper-jute slf4j-api slf4j-simple netty-buffer netty-codec netty-common netty-handler
	netty-resolver netty-transport netty-transport-native-epoll netty-transport-native-unix-common metrics-core
	snappy-java commons-cli"

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

# _lc_ask host port request: send request, print the answer (the server
# closes the connection after it).
_lc_ask() {
	(
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		printf '%b' "$3" >&3
		timeout 2 cat <&3
	) 2>/dev/null
}

_lc_wait_answer() { # host port request want seconds
	local i
	for ((i = 0; i < $5 * 10; i++)); do
		if [[ $(_lc_ask "$1" "$2" "$3") == *"$4"* ]]; then return 0; fi
		sleep 0.1
	done
	return 1
}

_lc_apt() { # package...
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

leasecheck_services_stop() {
	local pid
	for pid in "${_LC_ZK_PID:-}" "${_LC_ETCD_PID:-}"; do
		if [ -n "$pid" ]; then
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	_LC_ZK_PID= _LC_ETCD_PID=
	if [ -n "${_LC_ZK_DIR:-}" ]; then
		rm -rf "$_LC_ZK_DIR"
		_LC_ZK_DIR=
	fi
	if [ -n "${_LC_ETCD_DIR:-}" ]; then
		rm -rf "$_LC_ETCD_DIR"
		_LC_ETCD_DIR=
	fi
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

	_lc_start_zookeeper
	_lc_start_etcd
}

_lc_start_zookeeper() {
	if [ ! -f /usr/share/java/zookeeper.jar ] || ! command -v java >/dev/null 2>&1; then
		_lc_apt zookeeper || echo "services: could not install zookeeper" >&2
	fi
	if [ ! -f /usr/share/java/zookeeper.jar ] || ! command -v java >/dev/null 2>&1; then
		echo "services: no ZooKeeper; its tests start their own or fail under CI" >&2
		return 0
	fi
	local port cp="" jar
	port=$(_lc_free_port)
	_LC_ZK_DIR=$(mktemp -d /tmp/leasecheck-ci-zk-XXXXXX)
	for jar in $_LC_ZK_JARS; do
		if [ -f "/usr/share/java/$jar.jar" ]; then cp="$cp${cp:+:}/usr/share/java/$jar.jar"; fi
	done
	cat >"$_LC_ZK_DIR/zoo.cfg" <<-EOF
		tickTime=100
		dataDir=$_LC_ZK_DIR/data
		clientPort=$port
		clientPortAddress=127.0.0.1
		minSessionTimeout=200
		maxSessionTimeout=60000
		maxClientCnxns=0
		admin.enableServer=false
		4lw.commands.whitelist=srvr,ruok
		forceSync=no
	EOF
	java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dzookeeper.snapshot.trust.empty=true \
		-cp "$cp" org.apache.zookeeper.server.ZooKeeperServerMain "$_LC_ZK_DIR/zoo.cfg" >"$_LC_ZK_DIR/log" 2>&1 &
	_LC_ZK_PID=$!
	# srvr says "Mode:" once the server serves (the port opens earlier).
	if _lc_wait_answer 127.0.0.1 "$port" srvr "Mode:" 60; then
		export LEASECHECK_ZK_ADDR="127.0.0.1:$port"
		echo "services: zookeeper on 127.0.0.1:$port"
	else
		echo "services: ZooKeeper did not start:" >&2
		cat "$_LC_ZK_DIR/log" >&2
	fi
}

_lc_start_etcd() {
	if ! command -v "${LEASECHECK_ETCD_BIN:-etcd}" >/dev/null 2>&1; then
		_lc_apt etcd-server || echo "services: could not install etcd-server" >&2
	fi
	local bin
	bin=$(command -v "${LEASECHECK_ETCD_BIN:-etcd}") || {
		echo "services: no etcd server; its tests start their own or fail under CI" >&2
		return 0
	}
	local cport pport
	cport=$(_lc_free_port)
	pport=$(_lc_free_port)
	_LC_ETCD_DIR=$(mktemp -d /tmp/leasecheck-ci-etcd-XXXXXX)
	"$bin" --name leasecheck --data-dir "$_LC_ETCD_DIR/data" \
		--listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
		--listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
		--initial-cluster "leasecheck=http://127.0.0.1:$pport" --initial-cluster-state new \
		--logger zap --log-outputs stderr --log-level warn >"$_LC_ETCD_DIR/log" 2>&1 &
	_LC_ETCD_PID=$!
	if _lc_wait_answer 127.0.0.1 "$cport" 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' '"health":"true"' 60; then
		export LEASECHECK_ETCD34_ADDR="127.0.0.1:$cport"
		echo "services: $("$bin" --version | head -1) on 127.0.0.1:$cport"
	else
		echo "services: etcd did not start:" >&2
		cat "$_LC_ETCD_DIR/log" >&2
	fi
}
