// fastdds_pd: the pendulum PD controller (controllers/pdlaw.go's
// DefaultPD) as a ROS 2 node would run it on Fast DDS 2.9, configured the
// way rmw_fastrtps_cpp configures itself (see rawtype.hpp), without ROS 2:
//
//   - /clock (remapped by -r /clock:=...) read with rclcpp's ClockQoS
//     (KEEP_LAST 1, BEST_EFFORT, VOLATILE) on Fast DDS's own thread, as
//     rclcpp's clock subscription does;
//   - joint_states (sensor_msgs/msg/JointState, in the node's namespace)
//     with a reliable KEEP_LAST 1 reader;
//   - command (std_msgs/msg/Float64) with a reliable KEEP_LAST 1 writer;
//   - ros_discovery_info (Humble layout) naming the node;
//   - a 100 Hz loop (-p rate:=HZ) that sleeps on ROS time like
//     rclcpp::Clock::sleep_until: a condition variable woken by every clock
//     sample.
//
// Samples are encoded and decoded with fastcdr (libfastcdr-dev).
//
// Build: g++ -O2 -std=c++17 -I ../../../bench/c fastdds_pd.cpp -o fastdds_pd -lfastrtps -lfastcdr
// Run:   ./fastdds_pd --ros-args -p use_sim_time:=true -p rate:=100 -r __node:=pd -r __ns:=/arm -r /clock:=/tcs/pd/clock
#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <cstdio>
#include <mutex>

#include "../pdlaw.hpp"
#include "rawtype.hpp"

namespace {

using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;
using tcs2::Bytes;

using pdlaw::Torque;

std::atomic<bool> g_stop{false};

// State is what the DDS threads hand the control loop.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  int64_t now = -1;  // ROS time (ns), -1: no clock yet
  bool have = false;
  double theta = 0, thetadot = 0;
};

// CdrListener takes every valid sample on Fast DDS's thread and hands its
// CDR (past the encapsulation) to take; a sample take cannot decode (it
// throws) is skipped.
class CdrListener : public tcs2::dds::DataReaderListener {
 public:
  explicit CdrListener(std::function<void(Cdr&)> take) : take_(std::move(take)) {}
  void on_data_available(tcs2::dds::DataReader* r) override {
    Bytes b;
    tcs2::dds::SampleInfo info;
    while (r->take_next_sample(&b, &info) == eprosima::fastrtps::types::ReturnCode_t::RETCODE_OK) {
      if (!info.valid_data) continue;
      FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
      Cdr c(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
      try {
        c.read_encapsulation();
        take_(c);
      } catch (...) {
      }
    }
  }

 private:
  std::function<void(Cdr&)> take_;
};

// OnClock stores a builtin_interfaces/Time (a rosgraph_msgs/Clock).
void OnClock(State* s, Cdr& c) {
  int32_t sec = 0;
  uint32_t nsec = 0;
  c >> sec >> nsec;
  std::lock_guard<std::mutex> l(s->mu);
  s->now = int64_t(sec) * 1000000000 + nsec;
  s->cv.notify_all();
}

// OnJoints stores position[0] and velocity[0] of a sensor_msgs/JointState.
void OnJoints(State* s, Cdr& c) {
  int32_t sec;
  uint32_t nsec;
  std::string frame;
  std::vector<std::string> names;
  std::vector<double> pos, vel, eff;
  c >> sec >> nsec >> frame >> names >> pos >> vel >> eff;
  if (pos.empty() || vel.empty()) return;
  std::lock_guard<std::mutex> l(s->mu);
  s->have = true;
  s->theta = pos[0];
  s->thetadot = vel[0];
}

Bytes EncodeFloat64(double v) {
  Bytes b(64);
  FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
  Cdr c(fb, Cdr::LITTLE_ENDIANNESS, Cdr::DDS_CDR);
  c.serialize_encapsulation();
  c << v;
  b.resize(c.getSerializedDataLength());
  return b;
}

// Discovery is the node's ParticipantEntitiesInfo (Humble: Gid char[24]).
Bytes Discovery(const tcs2::rtps::GUID_t& pp, const std::string& ns, const std::string& name,
                const std::vector<tcs2::rtps::GUID_t>& readers, const std::vector<tcs2::rtps::GUID_t>& writers) {
  Bytes b(4096);
  FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
  Cdr c(fb, Cdr::LITTLE_ENDIANNESS, Cdr::DDS_CDR);
  c.serialize_encapsulation();
  auto gid = [&c](const tcs2::rtps::GUID_t& g) {
    uint8_t d[24] = {0};
    std::memcpy(d, g.guidPrefix.value, 12);
    std::memcpy(d + 12, g.entityId.value, 4);
    c.serializeArray(d, 24);
  };
  gid(pp);
  c << uint32_t(1) << ns << name;
  c << uint32_t(readers.size());
  for (auto& g : readers) gid(g);
  c << uint32_t(writers.size());
  for (auto& g : writers) gid(g);
  b.resize(c.getSerializedDataLength());
  return b;
}

int Run(int argc, char** argv) {
  tcs2::Args args(argc, argv);
  const double hz = args.Param("rate", 100), target = args.Param("target", M_PI);
  if (!(hz > 0 && hz <= 1e6)) {
    std::fprintf(stderr, "fastdds_pd: rate %g: want (0, 1e6] Hz\n", hz);
    return 2;
  }
  const int64_t period = int64_t(std::llround(1e9 / hz));
  State s;
  CdrListener cl([&s](Cdr& c) { OnClock(&s, c); });
  CdrListener jl([&s](Cdr& c) { OnJoints(&s, c); });
  tcs2::Node node(args.node);
  const std::string clock = args.Resolve("/clock"), joints = args.Resolve("joint_states"),
                    command = args.Resolve("command");
  auto* cr = node.Reader("rt" + clock, "rosgraph_msgs/msg/Clock", false, false, 1, &cl);
  auto* jr = node.Reader("rt" + joints, "sensor_msgs/msg/JointState", true, false, 1, &jl);
  auto* cw = node.Writer("rt" + command, "std_msgs/msg/Float64", true, false, 1);
  auto* dw = node.Writer("ros_discovery_info", "rmw_dds_common/msg/ParticipantEntitiesInfo", true, true, 1);
  if (cr == nullptr || jr == nullptr || cw == nullptr || dw == nullptr) {
    std::fprintf(stderr, "fastdds_pd: cannot create the endpoints\n");
    return 1;
  }
  Bytes disc = Discovery(node.participant()->guid(), args.ns, args.node, {cr->guid(), jr->guid()}, {cw->guid()});
  dw->write(&disc);
  std::fprintf(stderr, "fastdds_pd: %g Hz on ROS time from %s, %s -> %s\n", hz, clock.c_str(), joints.c_str(),
               command.c_str());

  // rclcpp: the first activation once the clock is known, then every
  // period of ROS time (sleep_until on the node's clock).
  int64_t next;
  {
    std::unique_lock<std::mutex> l(s.mu);
    s.cv.wait(l, [&s] { return s.now >= 0 || g_stop; });
    next = s.now;
  }
  while (!g_stop) {
    double u;
    {
      std::lock_guard<std::mutex> l(s.mu);
      u = s.have ? Torque(s.theta, s.thetadot, target) : 0.0;
    }
    Bytes cmd = EncodeFloat64(u);
    cw->write(&cmd);
    next += period;
    std::unique_lock<std::mutex> l(s.mu);
    s.cv.wait(l, [&s, next] { return s.now >= next || g_stop; });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fastdds_pd: %s\n", e.what());
    return 1;
  }
}
