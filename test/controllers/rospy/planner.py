#!/usr/bin/python3
"""planner: a planner that thinks, an ordinary rospy node.

Computes for ~cpu_ms milliseconds of this thread's CPU time (default 30),
then publishes a plan on plan (geometry_msgs/PointStamped: header.stamp is
ROS time when the plan is published, point.x the plan's number, point.y the
target angle), and starts again. It never sleeps: it is the kind of node tcs
runs best-effort below a controller. Each plan is also printed as

    plan <n> stamp_ns <ROS time in ns> cpu_ns <CPU of the computation>

Run it with /usr/bin/python3:

    /usr/bin/python3 planner.py __ns:=/arm _cpu_ms:=30
"""

import math
import sys
import time

import rospy
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
    rospy.init_node("planner")
    cpu_ms = rospy.get_param("~cpu_ms", 30.0)
    if isinstance(cpu_ms, bool) or not isinstance(cpu_ms, (int, float)) or not 0 < cpu_ms < 1e6:
        rospy.logfatal("parameter %s = %r: want milliseconds in (0, 1e6)", rospy.resolve_name("~cpu_ms"), cpu_ms)
        return 2
    # queue_size=None: publish() writes to the subscribers' sockets before it
    # returns, so the plan leaves when the computation ends.
    pub = rospy.Publisher("plan", PointStamped, queue_size=None)
    rospy.loginfo("planning every %g ms of CPU on %s", cpu_ms, rospy.resolve_name("plan"))
    # Plan from the first valid ROS time on, as planners do (their inputs
    # are stamped): under tcs a best-effort node's clock starts when virtual
    # time begins.
    while not rospy.is_shutdown() and rospy.get_rostime().is_zero():
        time.sleep(0.001)
    print("start stamp_ns %d" % rospy.get_rostime().to_nsec(), flush=True)
    n = 0
    while not rospy.is_shutdown():
        used = think(int(cpu_ms * 1e6))
        msg = PointStamped()
        msg.header.stamp = rospy.get_rostime()
        msg.header.seq = n
        msg.point.x = n
        msg.point.y = math.pi
        pub.publish(msg)
        print("plan %d stamp_ns %d cpu_ns %d" % (n, msg.header.stamp.to_nsec(), used), flush=True)
        n += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
