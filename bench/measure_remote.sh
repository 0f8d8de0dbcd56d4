#!/usr/bin/env bash
# Remote against local (docs/remote.md, "Cost"): serves DIR with Debian's nginx
# on 127.0.0.1 (a free port, its own temporary prefix, stopped on exit) and
# runs remote_bench over the *.gguf files in it.
#
#   bench/measure_remote.sh [BUILD_DIR] [DIR] [benchmark flags...]
#   (defaults: build/bench, ../shared/corpus-real/valid)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/bench}" && pwd)
dir=$(cd "${2:-$root/../shared/corpus-real/valid}" && pwd)
shift $(( $# > 2 ? 2 : $# ))
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$port; root $dir; }
}
CONF
/usr/sbin/nginx -e "$work/error.log" -p "$work" -c "$work/nginx.conf" &
nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; wait $nginx_pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done
cd "$dir"
files=(*.gguf)
"$build/bench/remote_bench" "$@" "http://127.0.0.1:$port" "$dir" "${files[@]}"
