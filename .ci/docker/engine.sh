#!/usr/bin/env bash
# Make sure a Docker engine answers: leave a running one alone, otherwise start dockerd in
# the background (as root) with published ports on loopback only (--ip 127.0.0.1), and wait
# until it answers. Installs Debian's docker.io first when dockerd is missing.
set -euo pipefail

log=${DOCKERD_LOG:-/var/log/kafka-shim-dockerd.log}

if docker info >/dev/null 2>&1; then
    echo "docker engine already running: $(docker version --format '{{.Server.Version}}')"
    exit 0
fi
if ! command -v dockerd >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends docker.io
fi
# A pid file left by an engine that is gone (a machine restored from a snapshot) makes dockerd
# refuse to start; no dockerd runs here, so it is stale.
if [ -f /var/run/docker.pid ] && ! pgrep -x dockerd >/dev/null; then
    echo "removing the stale /var/run/docker.pid (pid $(cat /var/run/docker.pid) is not dockerd)"
    rm -f /var/run/docker.pid
fi
# containerd is started by dockerd itself when none runs; the engine outlives this script.
nohup dockerd --ip 127.0.0.1 >"$log" 2>&1 </dev/null &
for _ in $(seq 1 60); do
    if docker info >/dev/null 2>&1; then
        echo "docker engine started: $(docker version --format '{{.Server.Version}}') (log: $log)"
        exit 0
    fi
    sleep 0.5
done
echo "dockerd did not answer within 30 s; its log ($log):" >&2
tail -n 30 "$log" >&2
exit 1
