#!/usr/bin/python3
"""rclpy_pd: the pendulum PD controller as an ordinary rclpy node (ROS 2 Jazzy).

Nothing in it knows about tcs. A timer made with Node.create_timer (on the
node clock: sim time when use_sim_time is true) computes the torque from the
newest joint_states (sensor_msgs/msg/JointState: position[0] = theta,
velocity[0] = theta dot) and publishes it on command (std_msgs/msg/Float64;
with the parameter array true a Float64MultiArray of one value).
The law is controllers/pdlaw.go's DefaultPD. Each timer callback prints
"tick <ROS time ns>". Parameters: rate (Hz, default 100.0), target (rad,
default pi).

    /usr/bin/python3 rclpy_pd.py --ros-args -p use_sim_time:=true -p rate:=100.0 -r __ns:=/arm
"""

import math
import sys

import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray

# controllers.DefaultPD()
KP, KD, KE, CATCH, MAX_TORQUE = 40.0, 8.0, 2.0, 0.5, 5.0
MASS, LENGTH, GRAVITY = 1.0, 1.0, 9.81


def wrap_angle(a):
    a = math.fmod(a + math.pi, 2 * math.pi)
    if a <= 0:
        a += 2 * math.pi
    return a - math.pi


def torque(theta, thetadot, target):
    """Port of controllers.PD.Torque with DefaultPD's gains."""
    if math.isinf(theta):
        return 0.0
    e = wrap_angle(theta - target)
    if abs(e) < CATCH:
        u = -KP * e - KD * thetadot
    else:
        mgl = MASS * GRAVITY * LENGTH
        energy = 0.5 * MASS * LENGTH * LENGTH * thetadot * thetadot - mgl * math.cos(theta)
        want = -mgl * math.cos(target)
        u = KE * (want - energy) * (-1.0 if thetadot < 0 else 1.0)
    if math.isnan(u):
        return 0.0
    return max(-MAX_TORQUE, min(MAX_TORQUE, u))


class PD(Node):
    def __init__(self):
        super().__init__("pd")
        self.hz = float(self.declare_parameter("rate", 100.0).value)
        self.target = float(self.declare_parameter("target", math.pi).value)
        if not 0 < self.hz <= 1e6 or not math.isfinite(self.target):
            raise ValueError("rate must be in (0, 1e6] Hz and target finite")
        self.latest = None
        # array true: the command is a std_msgs/Float64MultiArray of one
        # value, as a ros2_control forward command controller takes it.
        self.array = bool(self.declare_parameter("array", False).value)
        self.pub = self.create_publisher(Float64MultiArray if self.array else Float64, "command", 10)
        self.create_subscription(JointState, "joint_states", self.on_state, 10)
        self.create_timer(1.0 / self.hz, self.on_timer)
        self.get_logger().info("%g Hz on the node clock, target %g rad" % (self.hz, self.target))

    def on_state(self, msg):
        if len(msg.position) < 1 or len(msg.velocity) < 1:
            return
        self.latest = (msg.position[0], msg.velocity[0])

    def on_timer(self):
        print("tick %d" % self.get_clock().now().nanoseconds, flush=True)
        js = self.latest
        u = 0.0 if js is None else torque(js[0], js[1], self.target)
        self.pub.publish(Float64MultiArray(data=[u]) if self.array else Float64(data=u))


def main():
    rclpy.init(args=sys.argv)
    try:
        node = PD()
    except ValueError as e:
        print("rclpy_pd: %s" % e, file=sys.stderr)
        return 2
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
