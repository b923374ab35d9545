#!/usr/bin/python3
"""sim_client: an rclpy client of tcs's simulation_interfaces services (ROS 2 Jazzy).

Calls /tcs/step_simulation `calls` times with `steps` steps each and, after
each call, /tcs/get_simulation_state; prints one line per step call

    call <i> us <wall µs from request to reply> result <code> state <state>

and a summary line

    latency_us median <m> p90 <p> max <x> calls <n>

    /usr/bin/python3 sim_client.py --ros-args -p calls:=100 -p steps:=1
"""

import statistics
import sys
import time

import rclpy
from rclpy.node import Node
from simulation_interfaces.srv import GetSimulationState, StepSimulation


def call(node, client, req):
    future = client.call_async(req)
    rclpy.spin_until_future_complete(node, future, timeout_sec=60.0)
    if not future.done():
        print("sim_client: no reply within 60 s", file=sys.stderr)
        sys.exit(1)
    return future.result()


def main():
    rclpy.init(args=sys.argv)
    node = Node("sim_client")
    calls = int(node.declare_parameter("calls", 100).value)
    steps = int(node.declare_parameter("steps", 1).value)
    step = node.create_client(StepSimulation, "/tcs/step_simulation")
    state = node.create_client(GetSimulationState, "/tcs/get_simulation_state")
    for c in (step, state):
        if not c.wait_for_service(timeout_sec=30.0):
            print("sim_client: service %s not available" % c.srv_name, file=sys.stderr)
            sys.exit(1)
    lat = []
    for i in range(calls):
        t0 = time.monotonic_ns()
        r = call(node, step, StepSimulation.Request(steps=steps))
        lat.append((time.monotonic_ns() - t0) / 1e3)
        s = call(node, state, GetSimulationState.Request())
        print("call %d us %.0f result %d state %d" % (i, lat[-1], r.result.result, s.state.state), flush=True)
    lat.sort()
    print("latency_us median %.0f p90 %.0f max %.0f calls %d" % (
        statistics.median(lat), lat[int(0.9 * (len(lat) - 1))], lat[-1], len(lat)), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
