// pd: pendulum swing-up and balance controller, an ordinary roscpp node.
//
// Subscribes to joint_states (sensor_msgs/JointState: position[0] = theta,
// velocity[0] = theta dot) and publishes the torque on command
// (std_msgs/Float64) at ~rate Hz (default 1000) of ROS time, toward ~target
// rad (default pi, upright). With /use_sim_time true, ROS time is the /clock
// topic (remap it with /clock:=...). The law is controllers/pdlaw.go's
// DefaultPD. See ../README.md for the contract.
//
// Build (Debian: libroscpp-dev libstd-msgs-dev libsensor-msgs-dev):
//
//   g++ -O2 -std=c++17 pd.cpp -o pd $(pkg-config --cflags --libs roscpp std_msgs sensor_msgs)
//
// Run:
//
//   ./pd __ns:=/arm _rate:=100 /clock:=/tcs/pd/clock
#include <ros/ros.h>
#include <sensor_msgs/JointState.h>
#include <std_msgs/Float64.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "../pdlaw.hpp"

namespace {

using pdlaw::Torque;

constexpr double kMaxRate = 1e9;     // Hz: keeps the period at 1 ns or more

// NumberParam reads the private parameter name into v (v keeps its default
// when the parameter is not set); false when it is set but not a number.
bool NumberParam(const ros::NodeHandle& pnh, const std::string& name, double* v) {
  if (!pnh.hasParam(name)) return true;
  if (pnh.getParam(name, *v)) return true;  // a double, or an int converted
  ROS_FATAL("parameter %s: want a number", pnh.resolveName(name).c_str());
  return false;
}

// The newest joint state (the callback runs in ros::spinOnce, on the main
// thread).
struct Latest {
  bool have = false;
  double theta = 0, thetadot = 0;
};

int Run(int argc, char** argv) {
  ros::init(argc, argv, "pd");
  ros::NodeHandle nh;         // relative names resolve in the node's namespace (__ns:=)
  ros::NodeHandle pnh("~");   // private names: ~rate, ~target
  double hz = 1000, target = M_PI;
  if (!NumberParam(pnh, "rate", &hz) || !NumberParam(pnh, "target", &target)) return 2;
  if (!(hz > 0 && hz <= kMaxRate)) {
    ROS_FATAL("parameter %s = %g: want a rate in (0, %g] Hz", pnh.resolveName("rate").c_str(), hz, kMaxRate);
    return 2;
  }
  if (!std::isfinite(target)) {
    ROS_FATAL("parameter %s = %g: want a finite angle", pnh.resolveName("target").c_str(), target);
    return 2;
  }

  Latest latest;
  ros::Subscriber sub = nh.subscribe<sensor_msgs::JointState>(
      "joint_states", 1, [&latest](const sensor_msgs::JointState::ConstPtr& m) {
        if (m->position.empty() || m->velocity.empty()) return;  // keep the last one
        latest.have = true;
        latest.theta = m->position[0];
        latest.thetadot = m->velocity[0];
      });
  ros::Publisher pub = nh.advertise<std_msgs::Float64>("command", 1);
  ROS_INFO("%g Hz on ROS time, target %g rad, %s -> %s", hz, target, sub.getTopic().c_str(),
           pub.getTopic().c_str());

  // ~timer true: the ros::Timer pattern (a callback on ROS time, driven by
  // ros::spin) instead of the ros::Rate loop.
  bool use_timer = false;
  pnh.param("timer", use_timer, false);
  if (use_timer) {
    ros::Timer timer = nh.createTimer(ros::Duration(1.0 / hz), [&](const ros::TimerEvent&) {
      std_msgs::Float64 cmd;
      cmd.data = latest.have ? Torque(latest.theta, latest.thetadot, target) : 0.0;
      pub.publish(cmd);
    });
    ros::spin();
    return 0;
  }
  ros::Rate rate(hz);
  while (ros::ok()) {
    ros::spinOnce();
    std_msgs::Float64 cmd;
    cmd.data = latest.have ? Torque(latest.theta, latest.thetadot, target) : 0.0;
    pub.publish(cmd);
    rate.sleep();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const ros::Exception& e) {  // e.g. an invalid __name:= or __ns:=
    std::fprintf(stderr, "pd: %s\n", e.what());
    return 1;
  }
}
