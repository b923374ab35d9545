// rclcpp_arm: a joint-space PD controller for the MuJoCo arm
// (dynamics/mujoco/models/arm.xml) as an ordinary rclcpp node (ROS 2
// Jazzy), paced like ros2_control_node. Nothing in it knows about tcs: it
// runs on the node's clock, which is sim time when use_sim_time is true.
//
// A control thread reads the newest joint_states (sensor_msgs/msg/
// JointState, joints base_yaw, shoulder, elbow by name), computes each
// joint's torque u = kp (target − q) − kd q̇ and publishes the three on
// commands (std_msgs/msg/Float64MultiArray, actuator order: what a
// forward_command_controller of effort interfaces takes), then sleeps
// until the next period on the node clock (next += period; sleep_until),
// while a SingleThreadedExecutor spins the subscription in the main
// thread. Each activation prints "tick <ROS time ns>" (line-buffered).
//
// Parameters: rate (Hz, default 500), target (three joint positions, rad,
// default [0.5, 0.5, 0.8]).
//
//   ./rclcpp_arm --ros-args -p use_sim_time:=true -p rate:=500.0 -r __ns:=/arm
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/rclcpp.hpp>
#include <sensor_msgs/msg/joint_state.hpp>
#include <std_msgs/msg/float64_multi_array.hpp>

namespace {

constexpr int kJoints = 3;
const std::array<const char*, kJoints> kNames = {"base_yaw", "shoulder", "elbow"};
constexpr std::array<double, kJoints> kKp = {20, 100, 60};
constexpr std::array<double, kJoints> kKd = {1, 10, 5};

class Arm : public rclcpp::Node {
 public:
  Arm() : rclcpp::Node("arm_controller") {
    hz_ = declare_parameter("rate", 500.0);
    const auto target = declare_parameter("target", std::vector<double>{0.5, 0.5, 0.8});
    if (!(hz_ > 0 && hz_ <= 1e6) || target.size() != kJoints) {
      throw std::invalid_argument("rate must be in (0, 1e6] Hz and target three joint positions");
    }
    for (int i = 0; i < kJoints; i++) target_[i] = target[i];
    pub_ = create_publisher<std_msgs::msg::Float64MultiArray>("commands", 10);
    sub_ = create_subscription<sensor_msgs::msg::JointState>(
        "joint_states", 10, [this](sensor_msgs::msg::JointState::ConstSharedPtr m) { OnState(*m); });
    RCLCPP_INFO(get_logger(), "%g Hz on the node clock (%s)", hz_,
                get_clock()->get_clock_type() == RCL_ROS_TIME ? "ROS time" : "other");
  }

  // Loop is the control loop (its own thread), ros2_control_node's pacing.
  void Loop() {
    const auto clock = get_clock();
    const rclcpp::Duration period(std::chrono::nanoseconds(static_cast<int64_t>(std::llround(1e9 / hz_))));
    rclcpp::Time next = clock->now();
    while (rclcpp::ok()) {
      std::printf("tick %lld\n", static_cast<long long>(clock->now().nanoseconds()));
      Publish();
      next += period;
      if (!clock->sleep_until(next)) break;  // false: shutdown or time source changed
    }
  }

 private:
  void OnState(const sensor_msgs::msg::JointState& m) {
    std::lock_guard<std::mutex> l(mu_);
    for (size_t k = 0; k < m.name.size() && k < m.position.size() && k < m.velocity.size(); k++) {
      for (int i = 0; i < kJoints; i++) {
        if (m.name[k] == kNames[i]) {
          q_[i] = m.position[k];
          qd_[i] = m.velocity[k];
          have_ = true;
        }
      }
    }
  }

  void Publish() {
    std_msgs::msg::Float64MultiArray cmd;
    cmd.data.assign(kJoints, 0.0);
    {
      std::lock_guard<std::mutex> l(mu_);
      if (have_) {
        for (int i = 0; i < kJoints; i++) cmd.data[i] = kKp[i] * (target_[i] - q_[i]) - kKd[i] * qd_[i];
      }
    }
    pub_->publish(cmd);
  }

  double hz_ = 500;
  std::array<double, kJoints> target_{}, q_{}, qd_{};
  std::mutex mu_;
  bool have_ = false;
  rclcpp::Publisher<std_msgs::msg::Float64MultiArray>::SharedPtr pub_;
  rclcpp::Subscription<sensor_msgs::msg::JointState>::SharedPtr sub_;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  rclcpp::init(argc, argv);
  std::shared_ptr<Arm> node;
  try {
    node = std::make_shared<Arm>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rclcpp_arm: %s\n", e.what());
    rclcpp::shutdown();
    return 2;
  }
  rclcpp::executors::SingleThreadedExecutor exec;
  exec.add_node(node);
  std::thread spin([&exec] { exec.spin(); });
  node->Loop();
  exec.cancel();
  spin.join();
  rclcpp::shutdown();
  return 0;
}
