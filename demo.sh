#!/usr/bin/env bash
# The demo: a native PD controller swings up and balances the embedded
# pendulum at 1 kHz for 10 s of virtual time, every microsecond of its CPU
# charged to simulated time. Needs Go (≥ 1.26), root or CAP_SYS_NICE, 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null || { echo "demo.sh: Go is not installed (need Go ≥ 1.26 on PATH)"; exit 1; }
go build -o bin/tcs ./cmd/tcs
exec bin/tcs run config/pendulum.yaml --out out/demo "$@"
