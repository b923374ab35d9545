#!/usr/bin/env bash
# Runs the Go fuzz targets of the decoders of bytes from outside (issue 19,
# part 5), one after the other, each for FUZZTIME (default 10m) with one
# worker, and keeps what they find in the repository: every input the Go
# fuzz cache gained during the run (new coverage) is copied into the
# target's testdata/fuzz/FuzzXxx/, which plain `go test` replays. A crash
# is written there by go test itself (the regression seed) and makes the
# script exit 1 after the other targets ran.
#
#   test/fuzz.sh                      every target, 10 minutes each
#   FUZZTIME=2m test/fuzz.sh          2 minutes each
#   test/fuzz.sh FuzzRead FuzzParse   only these targets
#   test/fuzz.sh -l                   list the targets
#
# Per target it prints executions and new-coverage inputs (go test's last
# "fuzz: elapsed" line) and how many inputs it copied; the full output is
# in $FUZZLOG (default /tmp/tcs-fuzz-<date>/). Set FUZZCOPY=0 to leave
# testdata alone.
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10m}
FUZZCOPY=${FUZZCOPY:-1}
FUZZLOG=${FUZZLOG:-/tmp/tcs-fuzz-$(date +%Y%m%d-%H%M%S)}

# package directory and target, one pair a line: the decoders of bytes
# that come from outside tcs.
TARGETS="
bridge/ros1 FuzzReadFrames
bridge/ros1 FuzzReadHeader
bridge/ros1 FuzzReadServiceRequest
msgs FuzzDecodeScalars
msgs FuzzDecodeFloat64MultiArray
msgs/cdr FuzzReader
msgs/cdr FuzzWriterReader
msgs/ros2 FuzzDecode
msgs/ros2 FuzzDiagnosticsFromROS1
coordinator/native FuzzDecodeRequest
coordinator/native FuzzDecodeReply
bridge/master FuzzDecodeCall
bridge/master FuzzDecodeResponse
config FuzzParse
record FuzzRead
record FuzzConverter
record FuzzToROS1
"

if [[ ${1:-} == -l ]]; then
	echo "$TARGETS" | sed '/^$/d'
	exit 0
fi

# Every fuzz target in the repository must be listed (or be one of the
# parsers of the kernel's and the scenario's own text, listed here too).
NOT_FROM_OUTSIDE="FuzzParseStat FuzzSleepParseSyscall FuzzNew"
for t in $(grep -rhoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' . | sed 's/^func //'); do
	if ! grep -qw "$t" <<<"$TARGETS $NOT_FROM_OUTSIDE"; then
		echo "fuzz.sh: $t is not in TARGETS: add it" >&2
		exit 2
	fi
done

mkdir -p "$FUZZLOG"
module=$(go list -m)
cache="$(go env GOCACHE)/fuzz"
# Go fuzz time is wall time after the build; allow for building and
# minimising on a loaded machine. (FUZZTIME=Nx, a count of executions:
# an hour.)
secs=0
rest=$FUZZTIME
while [[ $rest =~ ^([0-9]+)(h|m|s)(.*)$ ]]; do
	n=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]} in h) n=$((n * 3600)) ;; m) n=$((n * 60)) ;; esac
	secs=$((secs + n))
	rest=${BASH_REMATCH[3]}
done
if [[ $FUZZTIME =~ ^[0-9]+x$ ]]; then
	secs=3600
elif [[ -n $rest || $secs == 0 ]]; then
	echo "fuzz.sh: FUZZTIME=$FUZZTIME: write it like 10m, 90s, 1h30m or 5000x" >&2
	exit 2
fi
bound=$((secs + 900))

failed=()
printf '%-20s %-30s %12s %8s %8s  %s\n' package target execs new copied result
while read -r pkg target; do
	[[ -z $pkg ]] && continue
	if (($# > 0)) && ! grep -qw "$target" <<<"$*"; then
		continue
	fi
	log="$FUZZLOG/$target.log"
	stamp="$FUZZLOG/$target.stamp"
	touch "$stamp"
	timeout "$bound" go test -run "^${target}\$" -fuzz "^${target}\$" -fuzztime "$FUZZTIME" \
		-parallel 1 "./$pkg" >"$log" 2>&1
	rc=$?
	last=$(grep '^fuzz: elapsed' "$log" | tail -1)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	new=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	copied=0
	if ((FUZZCOPY)); then
		src="$cache/$module/$pkg/$target"
		dst="$pkg/testdata/fuzz/$target"
		if [[ -d $src ]]; then
			while IFS= read -r f; do
				mkdir -p "$dst"
				if [[ ! -e $dst/$(basename "$f") ]]; then
					cp "$f" "$dst/" && copied=$((copied + 1))
				fi
			done < <(find "$src" -type f -newer "$stamp")
		fi
	fi
	result=ok
	if ((rc != 0)); then
		result="FAILED (rc $rc; see $log)"
		failed+=("$target")
	fi
	printf '%-20s %-30s %12s %8s %8s  %s\n' "$pkg" "$target" "${execs:-?}" "${new:-?}" "$copied" "$result"
	rm -f "$stamp"
done <<<"$TARGETS"

echo "logs: $FUZZLOG"
if ((${#failed[@]})); then
	echo "fuzz.sh: failed: ${failed[*]} (a crashing input is in the package's testdata/fuzz/<target>/)" >&2
	exit 1
fi
