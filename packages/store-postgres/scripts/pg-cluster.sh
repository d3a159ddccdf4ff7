#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks (Debian's packages, /usr/lib/postgresql/N/bin).
#   pg-cluster.sh start DIR   first call: initdb + start on 127.0.0.1 at a free port, create db "phasekit";
#                             later calls: start the same cluster again on the same port. Prints the port.
#   pg-cluster.sh stop DIR    fast shutdown (the data stays until DIR is removed).
# The server refuses to run as root, so as root every server command runs as the "postgres" OS user.
set -euo pipefail
cmd=$1
dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "pg-cluster: no /usr/lib/postgresql/*/bin (apt-get install -y postgresql)" >&2; exit 3; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case $cmd in
start)
  if [ ! -f "$dir/port" ]; then
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    # --no-sync: a throwaway cluster need not survive a power cut; the server itself still fsyncs (fsync=on).
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U phasekit --no-sync >/dev/null
    as_pg "$bin/pg_ctl" -D "$dir/data" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" start >/dev/null
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U phasekit phasekit
    echo "$port" > "$dir/port"
  else
    port=$(cat "$dir/port")
    as_pg "$bin/pg_ctl" -D "$dir/data" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" start >/dev/null
  fi
  echo "$port";;
stop) as_pg "$bin/pg_ctl" -D "$dir/data" -m "${3:-fast}" -w stop >/dev/null;;
*) echo "usage: pg-cluster.sh start|stop DIR" >&2; exit 2;;
esac
