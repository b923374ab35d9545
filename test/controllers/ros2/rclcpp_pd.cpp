// rclcpp_pd: the pendulum PD controller (controllers/pdlaw.go's DefaultPD)
// as an ordinary rclcpp node (ROS 2 Jazzy). Nothing in it knows about tcs:
// it runs on the node's clock, which is sim time when use_sim_time is true.
//
// It is three nodes in one binary, one per way ROS 2 controllers wait
// (parameter `pattern`):
//
//   timer     Node::create_timer on the node clock; the callback computes
//             and publishes (nav2 controllers, most ROS 2 nodes).
//   rate      a control loop in its own thread that paces itself with
//             Clock::sleep_until on the node clock (next += period), while
//             a SingleThreadedExecutor spins the subscriptions in the main
//             thread: the ros2_control_node pattern. With `rate_object`
//             true it uses rclcpp::Rate(hz, node clock) instead.
//   callback  no timer: the joint_states callback computes and publishes
//             the command (the executor's pattern, one command per state).
//
// Topics (relative, so __ns:=/arm puts them under the robot): joint_states
// (sensor_msgs/msg/JointState: position[0] = theta, velocity[0] = theta
// dot), command (std_msgs/msg/Float64, the torque). With plans true it also
// takes its target from plan (geometry_msgs/msg/PointStamped, point.y) and
// prints "got plan <n> stamp_ns <stamp> at_ns <now>".
//
// Each activation prints one line "tick <ROS time ns> state <stamp ns>"
// (line-buffered): the node clock's time when it began, and the header
// stamp of the joint state it computes with (0 before the first): the
// tests check that every period of ROS time has exactly one, and which
// sample each used.
//
// Parameters: rate (Hz, double, default 100), target (rad, default pi),
// pattern (timer | rate | callback), rate_object (bool), plans (bool).
//
// Build (see test/ros2_nodes_test.go; PREFIX is the ROS 2 install):
//
//   g++ -O2 -std=c++17 rclcpp_pd.cpp -I PREFIX/include/<pkg> ... -L PREFIX/lib -lrclcpp ...
//
// Run:
//
//   ./rclcpp_pd --ros-args -p use_sim_time:=true -p rate:=100.0 -p pattern:=timer -r __ns:=/arm
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <geometry_msgs/msg/point_stamped.hpp>
#include <rclcpp/rclcpp.hpp>
#include <sensor_msgs/msg/joint_state.hpp>
#include <std_msgs/msg/float64.hpp>

#include "../pdlaw.hpp"

namespace {

using pdlaw::Torque;

class PD : public rclcpp::Node {
 public:
  PD() : rclcpp::Node("pd") {
    hz_ = declare_parameter("rate", 100.0);
    target_ = declare_parameter("target", M_PI);
    pattern_ = declare_parameter("pattern", std::string("timer"));
    rate_object_ = declare_parameter("rate_object", false);
    const bool plans = declare_parameter("plans", false);
    if (!(hz_ > 0 && hz_ <= 1e6) || !std::isfinite(target_)) {
      throw std::invalid_argument("rate must be in (0, 1e6] Hz and target finite");
    }
    if (pattern_ != "timer" && pattern_ != "rate" && pattern_ != "callback") {
      throw std::invalid_argument("pattern must be timer, rate or callback, not " + pattern_);
    }
    pub_ = create_publisher<std_msgs::msg::Float64>("command", 10);
    sub_ = create_subscription<sensor_msgs::msg::JointState>(
        "joint_states", 10, [this](sensor_msgs::msg::JointState::ConstSharedPtr m) { OnState(*m); });
    if (plans) {
      plan_sub_ = create_subscription<geometry_msgs::msg::PointStamped>(
          "plan", 10, [this](geometry_msgs::msg::PointStamped::ConstSharedPtr m) {
            const int64_t at = now().nanoseconds();
            if (std::isfinite(m->point.y)) {
              std::lock_guard<std::mutex> l(mu_);
              target_ = m->point.y;
            }
            std::printf("got plan %d stamp_ns %lld at_ns %lld\n", static_cast<int>(m->point.x),
                        static_cast<long long>(rclcpp::Time(m->header.stamp).nanoseconds()),
                        static_cast<long long>(at));
          });
    }
    const auto period = std::chrono::duration<double>(1.0 / hz_);
    if (pattern_ == "timer") {
      timer_ = create_timer(std::chrono::duration_cast<std::chrono::nanoseconds>(period), [this] {
        Tick();
        Publish();
      });
    }
    RCLCPP_INFO(get_logger(), "%g Hz on the node clock (%s), pattern %s, target %g rad",
                hz_, get_clock()->get_clock_type() == RCL_ROS_TIME ? "ROS time" : "other", pattern_.c_str(), target_);
  }

  const std::string& pattern() const { return pattern_; }

  // Loop is the rate pattern's control loop (its own thread).
  void Loop() {
    const auto clock = get_clock();
    const rclcpp::Duration period(std::chrono::nanoseconds(static_cast<int64_t>(std::llround(1e9 / hz_))));
    if (rate_object_) {
      rclcpp::Rate rate(hz_, clock);
      while (rclcpp::ok()) {
        Tick();
        Publish();
        rate.sleep();
      }
      return;
    }
    // ros2_control_node: next_iteration_time += period; sleep_until.
    rclcpp::Time next = clock->now();
    while (rclcpp::ok()) {
      Tick();
      Publish();
      next += period;
      if (!clock->sleep_until(next)) break;  // false: shutdown or time source changed
    }
  }

 private:
  void OnState(const sensor_msgs::msg::JointState& m) {
    if (m.position.empty() || m.velocity.empty()) return;  // keep the last one
    {
      std::lock_guard<std::mutex> l(mu_);
      have_ = true;
      stamp_ = rclcpp::Time(m.header.stamp).nanoseconds();
      theta_ = m.position[0];
      thetadot_ = m.velocity[0];
    }
    if (pattern_ == "callback") {
      Tick();
      Publish();
    }
  }

  void Tick() {
    int64_t stamp;
    {
      std::lock_guard<std::mutex> l(mu_);
      stamp = stamp_;
    }
    std::printf("tick %lld state %lld\n", static_cast<long long>(now().nanoseconds()), static_cast<long long>(stamp));
  }

  void Publish() {
    std_msgs::msg::Float64 cmd;
    {
      std::lock_guard<std::mutex> l(mu_);
      cmd.data = have_ ? Torque(theta_, thetadot_, target_) : 0.0;
    }
    pub_->publish(cmd);
  }

  double hz_ = 100, target_ = M_PI;
  std::string pattern_;
  bool rate_object_ = false;
  std::mutex mu_;
  bool have_ = false;
  double theta_ = 0, thetadot_ = 0;
  int64_t stamp_ = 0;
  rclcpp::Publisher<std_msgs::msg::Float64>::SharedPtr pub_;
  rclcpp::Subscription<sensor_msgs::msg::JointState>::SharedPtr sub_;
  rclcpp::Subscription<geometry_msgs::msg::PointStamped>::SharedPtr plan_sub_;
  rclcpp::TimerBase::SharedPtr timer_;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  rclcpp::init(argc, argv);
  std::shared_ptr<PD> node;
  try {
    node = std::make_shared<PD>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rclcpp_pd: %s\n", e.what());
    rclcpp::shutdown();
    return 2;
  }
  if (node->pattern() == "rate") {
    rclcpp::executors::SingleThreadedExecutor exec;
    exec.add_node(node);
    std::thread spin([&exec] { exec.spin(); });
    node->Loop();
    exec.cancel();
    spin.join();
  } else {
    rclcpp::spin(node);
  }
  rclcpp::shutdown();
  return 0;
}
