#!/usr/bin/python3
"""pd: pendulum swing-up and balance controller, an ordinary rospy node.

Subscribes to joint_states (sensor_msgs/JointState: position[0] = theta,
velocity[0] = theta dot) and publishes the torque on command
(std_msgs/Float64) at ~rate Hz (default 1000) of ROS time, toward ~target rad
(default pi, upright); with ~array true the command is a
std_msgs/Float64MultiArray of one value instead (a ros2_control forward
command controller's layout). With ~plans true it also takes its target from the
plans on plan (geometry_msgs/PointStamped, point.y) and prints each as
"got plan <n> stamp_ns <its stamp> at_ns <ROS time when it arrived>". With
/use_sim_time true, ROS time is the /clock topic
(remap it with /clock:=...). The law is controllers/pdlaw.go's DefaultPD.
See ../README.md for the contract.

Run it with /usr/bin/python3 (a python3 on PATH may not import rospy):

    /usr/bin/python3 pd.py __ns:=/arm _rate:=100 /clock:=/tcs/pd/clock
"""

import math
import sys

import rospy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from geometry_msgs.msg import PointStamped

# controllers.DefaultPD()
KP = 40.0  # N*m/rad
KD = 8.0  # N*m*s/rad
KE = 2.0  # N*m/J
CATCH = 0.5  # rad
MAX_TORQUE = 5.0  # N*m
MASS = 1.0  # kg
LENGTH = 1.0  # m
GRAVITY = 9.81  # m/s^2

MAX_RATE = 1e9  # Hz: keeps the period at 1 ns or more


def wrap_angle(a):
    """Maps a to (-pi, pi] (NaN for NaN)."""
    a = math.fmod(a + math.pi, 2 * math.pi)  # fmod, not %: the sign of Go's math.Mod
    if a <= 0:
        a += 2 * math.pi
    return a - math.pi


def torque(theta, thetadot, target):
    """Port of controllers.PD.Torque with DefaultPD's gains."""
    if math.isinf(theta):
        return 0.0  # Go gets NaN (hence 0) where Python's fmod and cos raise
    e = wrap_angle(theta - target)
    if abs(e) < CATCH:
        u = -KP * e - KD * thetadot
    else:
        inertia = MASS * LENGTH * LENGTH
        mgl = MASS * GRAVITY * LENGTH
        energy = 0.5 * inertia * thetadot * thetadot - mgl * math.cos(theta)
        want = -mgl * math.cos(target)
        direction = 1.0  # pump along the motion; kick forward from rest
        if thetadot < 0:
            direction = -1.0
        u = KE * (want - energy) * direction
    if math.isnan(u):
        return 0.0
    return max(-MAX_TORQUE, min(MAX_TORQUE, u))


def number_param(name, default):
    """A numeric private parameter, or None (logged) when it is not one."""
    v = rospy.get_param(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        rospy.logfatal("parameter %s = %r: want a number", rospy.resolve_name(name), v)
        return None
    return float(v)


def main():
    rospy.init_node("pd")
    hz = number_param("~rate", 1000.0)
    target = number_param("~target", math.pi)
    if hz is None or target is None:
        return 2
    if not 0 < hz <= MAX_RATE:
        rospy.logfatal("parameter %s = %g: want a rate in (0, %g] Hz", rospy.resolve_name("~rate"), hz, MAX_RATE)
        return 2
    if not math.isfinite(target):
        rospy.logfatal("parameter %s = %g: want a finite angle", rospy.resolve_name("~target"), target)
        return 2

    latest = [None]  # (theta, thetadot) of the newest joint state

    def on_joint_state(msg):
        if len(msg.position) < 1 or len(msg.velocity) < 1:
            return  # not a pendulum's state: keep the last one
        latest[0] = (msg.position[0], msg.velocity[0])

    rospy.Subscriber("joint_states", JointState, on_joint_state, queue_size=1)

    goal = [target]

    def on_plan(msg):
        now = rospy.get_rostime()
        if math.isfinite(msg.point.y):
            goal[0] = msg.point.y
        print("got plan %d stamp_ns %d at_ns %d" % (int(msg.point.x), msg.header.stamp.to_nsec(), now.to_nsec()), flush=True)

    if rospy.get_param("~plans", False) is True:
        rospy.Subscriber("plan", PointStamped, on_plan, queue_size=10)
    # queue_size=None: publish() writes the command to the subscribers'
    # sockets in this thread, before rate.sleep() starts, so a node seen
    # blocked in its sleep has sent this period's command. queue_size=1 would
    # hand it to a publisher thread that may still hold it (or replace it
    # with the next one) while the node sleeps. rospy prints a SyntaxWarning
    # about the missing queue_size once; that is the price.
    # ~array true: the command is a std_msgs/Float64MultiArray of one value,
    # as a ros2_control forward command controller takes it.
    array = rospy.get_param("~array", False) is True
    pub = rospy.Publisher("command", Float64MultiArray if array else Float64, queue_size=None)
    rospy.loginfo("%g Hz on ROS time, target %g rad, %s -> %s",
                  hz, target, rospy.resolve_name("joint_states"), rospy.resolve_name("command"))

    # ~exit_after N (0: never): exit with ~exit_code after N activations, as
    # a node that fails mid-run would (the end-to-end tests check that tcs
    # reports the exit at that virtual time).
    exit_after = int(number_param("~exit_after", 0) or 0)
    exit_code = int(number_param("~exit_code", 3) or 0)
    activations = 0
    rate = rospy.Rate(hz)
    while not rospy.is_shutdown():
        if exit_after > 0 and activations == exit_after:
            rospy.loginfo("exiting with code %d after %d activations", exit_code, activations)
            return exit_code
        activations += 1
        js = latest[0]
        u = 0.0 if js is None else torque(js[0], js[1], goal[0])
        pub.publish(Float64MultiArray(data=[u]) if array else Float64(u))
        try:
            rate.sleep()
        except rospy.ROSInterruptException:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
