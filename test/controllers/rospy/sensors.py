#!/usr/bin/python3
"""sensors: drives a differential-drive base and prints what its sensors say, an ordinary rospy node.

At ~rate Hz (default 50) of ROS time it publishes both wheels' target
speed ~speed (rad/s, default 6) on command (std_msgs/Float64MultiArray).
Each message on imu (sensor_msgs/Imu) and front_range (sensor_msgs/Range)
is printed as one line:

    imu <stamp ns> <frame> <qx> <qy> <qz> <qw> <ax> <ay> <az> <orientation covariance[0]>
    range <stamp ns> <frame> <range>

Run it with /usr/bin/python3 (a python3 on PATH may not import rospy):

    /usr/bin/python3 sensors.py __ns:=/base /clock:=/tcs/drive/clock
"""

import sys

import rospy
from sensor_msgs.msg import Imu, Range
from std_msgs.msg import Float64MultiArray


def stamp_ns(header):
    return header.stamp.secs * 1000000000 + header.stamp.nsecs


def on_imu(m):
    q, a = m.orientation, m.linear_acceleration
    print("imu %d %s %r %r %r %r %r %r %r %r" % (stamp_ns(m.header), m.header.frame_id,
          q.x, q.y, q.z, q.w, a.x, a.y, a.z, m.orientation_covariance[0]), flush=True)


def on_range(m):
    print("range %d %s %r" % (stamp_ns(m.header), m.header.frame_id, m.range), flush=True)


def main():
    rospy.init_node("drive")
    rate = float(rospy.get_param("~rate", 50.0))
    speed = float(rospy.get_param("~speed", 6.0))
    pub = rospy.Publisher("command", Float64MultiArray, queue_size=10)
    rospy.Subscriber("imu", Imu, on_imu, queue_size=10)
    rospy.Subscriber("front_range", Range, on_range, queue_size=10)
    r = rospy.Rate(rate)
    while not rospy.is_shutdown():
        pub.publish(Float64MultiArray(data=[speed, speed]))
        try:
            r.sleep()
        except rospy.ROSInterruptException:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
