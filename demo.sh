#!/usr/bin/env bash
# The demo: an ordinary ROS 1 node (a goroslib PD controller, bundled in the
# tcs binary) swings up and balances the embedded pendulum for 10 s of
# virtual time, through tcs's embedded ROS master: no ROS installation
# needed. Every microsecond of the node's CPU is charged to simulated time.
# Needs Go (≥ 1.26), root or CAP_SYS_NICE, 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null || { echo "demo.sh: Go is not installed (need Go ≥ 1.26 on PATH)"; exit 1; }
go build -o bin/tcs ./cmd/tcs
exec bin/tcs demo --out out/demo "$@"
