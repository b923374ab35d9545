// fastdds_probe: Fast DDS 2.9 test programs for the ROS 2 bridge, configured
// like rmw_fastrtps_cpp (rawtype.hpp). Every mode also reads its /clock
// (ClockQoS), as a node on sim time does, so that the bridge knows it.
//
//   fastdds_probe latejoin GIDLEN [ROS ARGS]
//       joins late: a reliable transient-local reader of /clock and of
//       ros_discovery_info; prints "clock NS" for the first clock sample and
//       "node NS NAME readers R writers W" for each node tcs announces
//       (Gid of GIDLEN bytes: 24 Humble, 16 Iron and later), then exits.
//   fastdds_probe relay-pub N [ROS ARGS]
//       publishes N samples of tcs_test/msg/Plan (uint32 seq, string text,
//       float64[] values; a type tcs does not know) on "plan", one per
//       50 ms once a reader is matched, then waits to be killed.
//   fastdds_probe relay-sub N [ROS ARGS]
//       reads "plan" and prints "got SEQ TEXT V0" per sample; exits after N.
//
// Build: g++ -O2 -std=c++17 fastdds_probe.cpp -o fastdds_probe -lfastrtps -lfastcdr
#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "rawtype.hpp"

namespace {

using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;
using tcs2::Bytes;
using RC = eprosima::fastrtps::types::ReturnCode_t;

bool TakeOne(tcs2::dds::DataReader* r, Bytes* b) {
  tcs2::dds::SampleInfo info;
  while (r->take_next_sample(b, &info) == RC::RETCODE_OK) {
    if (info.valid_data) return true;
  }
  return false;
}

int LateJoin(const tcs2::Args& args, int gidlen) {
  tcs2::Node node("probe");
  auto* cr = node.Reader("rt" + args.Resolve("/clock"), "rosgraph_msgs/msg/Clock", true, true, 1, nullptr);
  auto* dr = node.Reader("ros_discovery_info", "rmw_dds_common/msg/ParticipantEntitiesInfo", true, true, 10, nullptr);
  bool clock = false, found = false;
  for (int i = 0; i < 1000 && !(clock && found); i++) {
    Bytes b;
    if (!clock && TakeOne(cr, &b)) {
      FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
      Cdr c(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
      int32_t sec;
      uint32_t nsec;
      c.read_encapsulation();
      c >> sec >> nsec;
      std::printf("clock %lld\n", (long long)sec * 1000000000 + nsec);
      clock = true;
    }
    while (TakeOne(dr, &b)) {
      FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
      Cdr c(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
      try {
        c.read_encapsulation();
        uint8_t gid[24];
        c.deserializeArray(gid, gidlen);
        uint32_t nodes;
        c >> nodes;
        for (uint32_t k = 0; k < nodes; k++) {
          std::string ns, name;
          uint32_t nr, nw;
          c >> ns >> name >> nr;
          for (uint32_t j = 0; j < nr; j++) c.deserializeArray(gid, gidlen);
          c >> nw;
          for (uint32_t j = 0; j < nw; j++) c.deserializeArray(gid, gidlen);
          std::printf("node %s %s readers %u writers %u rest %zu\n", ns.c_str(), name.c_str(), nr, nw,
                      b.size() - c.getSerializedDataLength());
          found = found || name == "tcs";
        }
      } catch (const std::exception& e) {
        std::printf("undecodable ros_discovery_info: %s\n", e.what());
      }
    }
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return clock && found ? 0 : 1;
}

int RelayPub(const tcs2::Args& args, int n) {
  tcs2::Node node(args.node);
  node.Reader("rt" + args.Resolve("/clock"), "rosgraph_msgs/msg/Clock", false, false, 1, nullptr);
  auto* w = node.Writer("rt" + args.Resolve("plan"), "tcs_test/msg/Plan", true, false, 10);
  for (;;) {
    eprosima::fastdds::dds::PublicationMatchedStatus st;
    w->get_publication_matched_status(st);
    if (st.current_count > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < n; i++) {
    Bytes b(256);
    FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
    Cdr c(fb, Cdr::LITTLE_ENDIANNESS, Cdr::DDS_CDR);
    c.serialize_encapsulation();
    c << uint32_t(i) << std::string("plan-" + std::to_string(i)) << std::vector<double>{i * 0.5, -1};
    b.resize(c.getSerializedDataLength());
    w->write(&b);
    std::printf("sent %d\n", i);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

int RelaySub(const tcs2::Args& args, int n) {
  tcs2::Node node(args.node);
  node.Reader("rt" + args.Resolve("/clock"), "rosgraph_msgs/msg/Clock", false, false, 1, nullptr);
  auto* r = node.Reader("rt" + args.Resolve("plan"), "tcs_test/msg/Plan", true, false, 10, nullptr);
  std::printf("reading %s\n", args.Resolve("plan").c_str());
  std::fflush(stdout);
  for (int got = 0; got < n;) {
    Bytes b;
    if (!TakeOne(r, &b)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    FastBuffer fb(reinterpret_cast<char*>(b.data()), b.size());
    Cdr c(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
    uint32_t seq;
    std::string text;
    std::vector<double> v;
    c.read_encapsulation();
    c >> seq >> text >> v;
    std::printf("got %u %s %g\n", seq, text.c_str(), v.empty() ? 0.0 : v[0]);
    std::fflush(stdout);
    got++;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tcs2::Args args(argc, argv);
  if (args.rest.size() < 2) {
    std::fprintf(stderr, "usage: fastdds_probe latejoin GIDLEN | relay-pub N | relay-sub N [--ros-args ...]\n");
    return 2;
  }
  try {
    const std::string mode = args.rest[0];
    const int k = std::atoi(args.rest[1].c_str());
    if (mode == "latejoin") return LateJoin(args, k == 16 ? 16 : 24);
    if (mode == "relay-pub") return RelayPub(args, k);
    if (mode == "relay-sub") return RelaySub(args, k);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fastdds_probe: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "fastdds_probe: unknown mode %s\n", args.rest[0].c_str());
  return 2;
}
