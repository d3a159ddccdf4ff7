#!/usr/bin/env bash
# Throwaway PostgreSQL cluster: cluster.sh start DIR -> prints PORT; cluster.sh stop DIR
set -euo pipefail
cmd=$1; dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case $cmd in
start)
  mkdir -p "$dir"; [ "$(id -u)" = 0 ] && chown postgres "$dir"
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  as_pg "$bin/initdb" -D "$dir/data" -A trust -U phasekit --no-sync >/dev/null
  as_pg "$bin/pg_ctl" -D "$dir/data" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" start >/dev/null
  as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U phasekit phasekit
  echo "$port" > "$dir/port"; echo "$port";;
stop) as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null;;
esac
