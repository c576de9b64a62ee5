#!/usr/bin/env bash
# Starts or stops a throwaway local ClickHouse server for the ClickHouse store tests.
#
#   test/store-clickhouse/start-clickhouse.sh start   # prints the URL; exit 0 when it answers
#   test/store-clickhouse/start-clickhouse.sh stop
#   test/store-clickhouse/start-clickhouse.sh status
#
# Everything lives in one temp folder ($ADXKIT_CLICKHOUSE_DIR, default /tmp/adxkit-clickhouse):
# config.xml, users.xml, data, logs and the pid file. It listens on 127.0.0.1 only, with the
# HTTP port from $ADXKIT_CLICKHOUSE_HTTP_PORT (default 18123) and the native port from
# $ADXKIT_CLICKHOUSE_TCP_PORT (default 19000); user "default", no password.
# Needs the clickhouse-server binary (Debian: apt-get install -y clickhouse-server); with
# ADXKIT_CLICKHOUSE_INSTALL=1 and root it installs it when missing. `start` exits 3 when no
# binary is there, so CI can go on and the tests skip themselves.
set -euo pipefail

DIR="${ADXKIT_CLICKHOUSE_DIR:-/tmp/adxkit-clickhouse}"
HTTP_PORT="${ADXKIT_CLICKHOUSE_HTTP_PORT:-18123}"
TCP_PORT="${ADXKIT_CLICKHOUSE_TCP_PORT:-19000}"
URL="http://127.0.0.1:${HTTP_PORT}"
PIDFILE="$DIR/clickhouse.pid"

find_binary() {
  for candidate in "${CLICKHOUSE_SERVER_BIN:-}" /usr/sbin/clickhouse-server /usr/bin/clickhouse-server "$(command -v clickhouse-server || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  # Newer packages ship one `clickhouse` binary: `clickhouse server`.
  if command -v clickhouse >/dev/null 2>&1; then echo "$(command -v clickhouse) server"; return 0; fi
  return 1
}

answers() { curl -fsS --max-time 2 "$URL/ping" >/dev/null 2>&1; }

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

write_config() {
  mkdir -p "$DIR/data" "$DIR/tmp" "$DIR/log" "$DIR/user_files" "$DIR/format_schemas"
  cat >"$DIR/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>$DIR/log/server.log</log>
    <errorlog>$DIR/log/server.err.log</errorlog>
    <size>10M</size>
    <count>2</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$HTTP_PORT</http_port>
  <tcp_port>$TCP_PORT</tcp_port>
  <max_connections>256</max_connections>
  <keep_alive_timeout>10</keep_alive_timeout>
  <max_concurrent_queries>64</max_concurrent_queries>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mark_cache_size>67108864</mark_cache_size>
  <path>$DIR/data/</path>
  <tmp_path>$DIR/tmp/</tmp_path>
  <user_files_path>$DIR/user_files/</user_files_path>
  <format_schema_path>$DIR/format_schemas/</format_schema_path>
  <users_config>$DIR/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
</yandex>
XML
  cat >"$DIR/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval>
    </default>
  </quotas>
</yandex>
XML
}

start() {
  if answers; then echo "$URL"; return 0; fi
  local binary
  if ! binary="$(find_binary)"; then
    if [ "${ADXKIT_CLICKHOUSE_INSTALL:-0}" = "1" ] && [ "$(id -u)" = "0" ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clickhouse-server >/dev/null
      binary="$(find_binary)" || { echo "clickhouse-server: install failed" >&2; return 3; }
    else
      echo "clickhouse-server not found (apt-get install -y clickhouse-server); the ClickHouse store tests will skip" >&2
      return 3
    fi
  fi
  write_config
  # shellcheck disable=SC2086  # "clickhouse server" is two words on purpose
  nohup $binary --config-file="$DIR/config.xml" >"$DIR/log/stdout.log" 2>&1 &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 60); do
    if answers; then echo "$URL"; return 0; fi
    if ! running_pid >/dev/null; then break; fi
    sleep 0.5
  done
  echo "clickhouse-server did not come up on $URL; last log lines:" >&2
  tail -n 20 "$DIR/log/stdout.log" "$DIR/log/server.err.log" >&2 2>/dev/null || true
  return 1
}

stop() {
  local pid
  if pid="$(running_pid)"; then
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" || true
  fi
  rm -f "$PIDFILE"
  # Data is throwaway: a clean start each time keeps test runs independent.
  if [ "${ADXKIT_CLICKHOUSE_KEEP:-0}" != "1" ]; then rm -rf "$DIR"; fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then echo "up: $URL"; else echo "down: $URL"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
