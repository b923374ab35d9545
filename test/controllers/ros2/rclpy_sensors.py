#!/usr/bin/python3
"""rclpy_sensors: drives a differential-drive base and prints what its sensors say.

An ordinary rclpy node (ROS 2 Jazzy) that knows nothing about tcs. A timer
made with Node.create_timer (on the node clock: sim time when use_sim_time
is true) publishes both wheels' target speed on command
(std_msgs/msg/Float64MultiArray, [speed, speed] rad/s). Each message on
imu (sensor_msgs/msg/Imu) and front_range (sensor_msgs/msg/Range) is
printed as one line:

    imu <stamp ns> <frame> <qx> <qy> <qz> <qw> <ax> <ay> <az> <orientation covariance[0]>
    range <stamp ns> <frame> <range>

Parameters: rate (Hz, default 50.0), speed (rad/s, default 6.0).

    /usr/bin/python3 rclpy_sensors.py --ros-args -p use_sim_time:=true -r __ns:=/base
"""

import math
import sys

import rclpy
from rclpy.node import Node
from sensor_msgs.msg import Imu, Range
from std_msgs.msg import Float64MultiArray


def stamp_ns(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


class Drive(Node):
    def __init__(self):
        super().__init__("drive")
        self.hz = float(self.declare_parameter("rate", 50.0).value)
        self.speed = float(self.declare_parameter("speed", 6.0).value)
        if not 0 < self.hz <= 1e6 or not math.isfinite(self.speed):
            raise ValueError("rate must be in (0, 1e6] Hz and speed finite")
        self.pub = self.create_publisher(Float64MultiArray, "command", 10)
        self.create_subscription(Imu, "imu", self.on_imu, 10)
        self.create_subscription(Range, "front_range", self.on_range, 10)
        self.create_timer(1.0 / self.hz, self.on_timer)

    def on_imu(self, m):
        q, a = m.orientation, m.linear_acceleration
        print("imu %d %s %r %r %r %r %r %r %r %r" % (stamp_ns(m.header), m.header.frame_id,
              q.x, q.y, q.z, q.w, a.x, a.y, a.z, m.orientation_covariance[0]), flush=True)

    def on_range(self, m):
        print("range %d %s %r" % (stamp_ns(m.header), m.header.frame_id, m.range), flush=True)

    def on_timer(self):
        self.pub.publish(Float64MultiArray(data=[self.speed, self.speed]))


def main():
    rclpy.init(args=sys.argv)
    try:
        node = Drive()
    except ValueError as e:
        print("rclpy_sensors: %s" % e, file=sys.stderr)
        return 2
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
