#!/usr/bin/env bash
# Runs the whole test suite of tcs, installing what it needs first:
# Debian packages (gcc for the C reference and C clients, ROS 1 for the
# interop tests, MuJoCo for the embedded MuJoCo world, Node.js for the
# recording check) and the pinned Go tools.
# Real processes, real SCHED_FIFO: run it as root (or with
# CAP_SYS_NICE) on a machine with at least 2 CPUs; tests that need what is
# missing skip with a reason.
set -euo pipefail
cd "$(dirname "$0")"

STATICCHECK_VERSION=v0.6.1   # staticcheck 2025.1.1

need_apt=()
command -v gcc >/dev/null || need_apt+=(gcc libc6-dev)
# Debian's ROS 1 (ros_comm 1.15, the Noetic line): the interop tests run
# rospy, roscpp (rosout), rostopic, rosparam, rosnode, rosservice,
# roslaunch and rosbag against tcs's embedded master.
ros1=(python3-rosmaster python3-roslaunch python3-rospy python3-rosbag python3-rostopic
	python3-rosparam python3-rosnode python3-rosservice python3-std-msgs python3-std-srvs rosout
	python3-sensor-msgs python3-geometry-msgs python3-diagnostic-msgs libroscpp-dev libstd-msgs-dev libsensor-msgs-dev g++ pkg-config
	# ROS 2 transport (build tag ros2): Cyclone DDS 0.10 for the bridge,
	# Fast DDS 2.9 / fastcdr 1.0 for the test controllers and golden bytes.
	cyclonedds-dev libfastrtps-dev libfastcdr-dev
	# MuJoCo world (build tag mujoco): MuJoCo 2.2.2's headers and library.
	libmujoco-dev)
for p in "${ros1[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || { need_apt+=("${ros1[@]}"); break; }
done
if ((${#need_apt[@]})); then
	echo "test.sh: installing ${need_apt[*]}"
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi
# Node.js reads run.mcap with Foxglove's own libraries (test/foxglove,
# versions pinned in its package-lock.json).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "test.sh: installing nodejs npm"
	apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm
fi
[[ -d test/foxglove/node_modules ]] || (cd test/foxglove && npm ci --no-audit --no-fund --loglevel=error)
command -v go >/dev/null || { echo "test.sh: Go is not installed (need Go ≥ 1.26 on PATH)"; exit 1; }

GOBIN="$(go env GOPATH)/bin"
if [[ ! -x "$GOBIN/staticcheck" ]]; then
	echo "test.sh: installing staticcheck $STATICCHECK_VERSION"
	GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

echo "== gofmt"
bad=$(gofmt -l .)
if [[ -n "$bad" ]]; then echo "not gofmt'ed:"; echo "$bad"; exit 1; fi
echo "== go vet"
go vet ./...
echo "== staticcheck"
"$GOBIN/staticcheck" ./...
echo "== go build"
go build -o bin/tcs ./cmd/tcs
# The packages whose tests run processes at real-time priorities:
# coordinator/linux and every package whose tests import it or
# coordinator/driver (that is how a test raises a priority or takes the
# simulation CPU's lock). The others need no privilege and run under the
# race detector; the real-time ones do not, as -race slows the code (2-20×,
# says Go's race detector manual) and so changes the timing they check.
mod=$(go list -m)
rt=() pure=()
while read -r pkg imports; do
	if [[ $pkg == "$mod/coordinator/linux" || " $imports " == *" $mod/coordinator/linux "* ||
		" $imports " == *" $mod/coordinator/driver "* ]]; then
		rt+=("$pkg")
	else
		pure+=("$pkg")
	fi
done < <(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./...)
echo "== go test -race (${#pure[@]} packages without real-time priorities)"
go test -race -count=1 -p 1 -timeout 30m "${pure[@]}" "$@"
echo "== go test (${#rt[@]} packages at real-time priorities: ${rt[*]#"$mod/"})"
# Packages that raise priorities take the simulation CPU's lock, so running
# packages in parallel is safe; -p 1 keeps timing tests off each other's CPU.
go test -count=1 -p 1 -timeout 30m "${rt[@]}" "$@"
echo "== mujoco build tag: vet, staticcheck, tests"
# The MuJoCo world (dynamics/mujoco, cgo) and its registration in
# dynamics.New: no real-time priority, so under the race detector.
go vet -tags mujoco ./...
"$GOBIN/staticcheck" -tags mujoco ./dynamics/...
go build -tags mujoco -o /dev/null ./cmd/tcs
go test -race -tags mujoco -count=1 -p 1 -timeout 10m ./dynamics/... "$@"
# The MuJoCo world's sensors through the ROS 1 bridge to a rospy node
# (real-time priority: no race detector).
go test -tags mujoco -count=1 -p 1 -timeout 10m -run MuJoCo ./test/ "$@"
echo "== ros2: a real ROS 2 (Jazzy) for the tests of real rclcpp/rclpy nodes"
# A user's /opt/ros/jazzy when present; else the minimal Jazzy of
# ../shared/ros2-jazzy, built once into a fixed cache prefix (build.sh does
# nothing when the prefix already holds the same manifest; a fresh build
# takes about 15 min on 2 cores); else those tests skip, saying why.
# TCS_ROS2_PREFIX tells the tests where it is ("" : skip).
ROS2_CACHE=/opt/ros2-jazzy-min
ROS2_SRC=../shared/ros2-jazzy
if [[ -f /opt/ros/jazzy/setup.bash ]]; then
	export TCS_ROS2_PREFIX=/opt/ros/jazzy
elif [[ -f $ROS2_SRC/build.sh ]]; then
	# build.sh runs colcon but does not install the Debian package that
	# ships the colcon command.
	command -v colcon >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends colcon; }
	t0=$SECONDS
	if bash "$ROS2_SRC/build.sh" "$ROS2_CACHE" >/tmp/tcs-ros2-build.log 2>&1; then
		export TCS_ROS2_PREFIX=$ROS2_CACHE
		echo "test.sh: ROS 2 from $ROS2_CACHE ($((SECONDS - t0)) s; log /tmp/tcs-ros2-build.log)"
	else
		tail -20 /tmp/tcs-ros2-build.log
		echo "test.sh: building ROS 2 from $ROS2_SRC failed (log /tmp/tcs-ros2-build.log): the real-ROS 2 tests skip"
		export TCS_ROS2_PREFIX=
	fi
else
	echo "test.sh: no /opt/ros/jazzy and no $ROS2_SRC/build.sh: the real-ROS 2 tests (rclcpp, rclpy, ros2 CLI) skip"
	export TCS_ROS2_PREFIX=
fi
echo "== ros2 build tag: vet, staticcheck, tests"
go vet -tags ros2 ./...
"$GOBIN/staticcheck" -tags ros2 ./bridge/ros2/... ./bench/... ./test/...
# The ROS 2 transport's own tests (type hashes through Cyclone's discovery,
# the simulation_interfaces server), the codecs' hash table and the
# recorded sensor definitions against the installed ROS 2: no real-time priority, so under the race detector.
go test -race -tags ros2 -count=1 -p 1 -timeout 20m ./bridge/ros2/ ./msgs/ros2/ ./record/ "$@"
go test -tags ros2 -count=1 -p 1 -timeout 40m -run ROS2 ./test/ ./bench/ "$@"
