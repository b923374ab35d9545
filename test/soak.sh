#!/usr/bin/env bash
# The soak of issue 19: one `tcs run` of 16 mixed clients (4 native C, 4
# native Go, 4 goroslib, 2 roscpp, 2 rospy PD controllers, each on its own
# pendulum) in consistent mode at max_rtf 1 for SOAK_MIN minutes of virtual
# time (as many of wall time), the tcs process sampled every minute (RSS,
# open fds, goroutines through tcs run --pprof, threads) and Δ p99 per
# minute from the run's recording; a least-squares slope per series against
# its noise. Writes results/soak/<date>-<commit>.{csv,md,png} and exits
# non-zero unless every series is flat and the run completed.
#
#   test/soak.sh                    the hour (SOAK_MIN=60)
#   SOAK_MIN=3 test/soak.sh         a short trial
#   SOAK_RESULTS=/tmp/s test/soak.sh  elsewhere than results/soak
#   test/soak.sh -keep -every 30s   more flags of tcs bench soak (-h lists them)
#
# Needs root (SCHED_FIFO), 2 CPUs, gcc, and Debian's roscpp and rospy (as
# ./test.sh installs them). The run waits for other tcs runs on the machine
# (/tmp/tcs-run.lock, then the simulation CPU's own lock); it is bounded:
# tcs stops it at twice SOAK_MIN plus 2 min of wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

SOAK_MIN=${SOAK_MIN:-60}
[[ $SOAK_MIN =~ ^[1-9][0-9]*$ ]] || { echo "soak.sh: SOAK_MIN=$SOAK_MIN: a whole number of minutes" >&2; exit 2; }
args=(-minutes "$SOAK_MIN")
[[ -n ${SOAK_RESULTS:-} ]] && args+=(-results "$SOAK_RESULTS")

# Built with its VCS stamp: the results are named by its commit.
go build -o bin/tcs ./cmd/tcs
echo "soak.sh: $SOAK_MIN min of virtual time at max_rtf 1 (about as much wall time, plus builds and start-up)"
exec flock /tmp/tcs-run.lock bin/tcs bench soak "${args[@]}" "$@"
