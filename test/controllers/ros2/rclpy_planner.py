#!/usr/bin/python3
"""rclpy_planner: a planner that thinks, an ordinary rclpy node (ROS 2 Jazzy).

Computes for cpu_ms milliseconds of this thread's CPU time (default 30.0),
then publishes a plan on plan (geometry_msgs/msg/PointStamped: header.stamp
is the node clock's time when the plan is published, point.x the plan's
number, point.y the target angle, pi), lets the executor take what arrived
(the /clock: rclpy's sim time moves only while the node spins), and starts
again. It never sleeps. Each plan is printed as

    plan <n> stamp_ns <ROS time ns> cpu_ns <CPU of the computation>

    /usr/bin/python3 rclpy_planner.py --ros-args -p use_sim_time:=true -p cpu_ms:=30.0
"""

import math
import sys
import time

import rclpy
from rclpy.node import Node
from geometry_msgs.msg import PointStamped


def think(cpu_ns):
    """Busy work for cpu_ns of this thread's CPU time; returns what it used."""
    t0 = time.thread_time_ns()
    x = 0.0
    while time.thread_time_ns() - t0 < cpu_ns:
        for k in range(200):
            x += math.sin(k * 0.001)
    return time.thread_time_ns() - t0


def main():
    rclpy.init(args=sys.argv)
    node = Node("planner")
    cpu_ms = float(node.declare_parameter("cpu_ms", 30.0).value)
    if not 0 < cpu_ms < 1e6:
        print("rclpy_planner: cpu_ms must be in (0, 1e6)", file=sys.stderr)
        return 2
    pub = node.create_publisher(PointStamped, "plan", 10)
    node.get_logger().info("planning every %g ms of CPU" % cpu_ms)
    n = 0
    try:
        while rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0)
            used = think(int(cpu_ms * 1e6))
            rclpy.spin_once(node, timeout_sec=0)
            msg = PointStamped()
            stamp = node.get_clock().now()
            msg.header.stamp = stamp.to_msg()
            msg.point.x = float(n)
            msg.point.y = math.pi
            pub.publish(msg)
            print("plan %d stamp_ns %d cpu_ns %d" % (n, stamp.nanoseconds, used), flush=True)
            n += 1
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
