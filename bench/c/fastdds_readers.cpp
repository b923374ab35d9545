// fastdds_readers: the ROS 2 subscribers of `tcs bench delivery`. One
// process, one Fast DDS 2.9 participant per subscriber (as goroslib's
// subscribers are one node each), configured the way rmw_fastrtps_cpp
// (Humble) configures its own: USER_DATA "enclave=/;", ROS_LOCALHOST_ONLY=1
// -> UDPv4 on 127.0.0.1 only, keyless topics rt/..., type
// pkg::msg::dds_::T_, no type information, no data sharing,
// PREALLOCATED_WITH_REALLOC history memory.
//
//   fastdds_readers MESSAGES EPOCH_NS TOPIC CLOCK_TOPIC...
//
// Subscriber i reads its private clock CLOCK_TOPIC[i] (rclcpp's ClockQoS:
// the tcs gate knows a client by the participant that reads its clock) and
// TOPIC, a sensor_msgs/msg/JointState, with a RELIABLE, VOLATILE,
// KEEP_LAST 100 reader. Each sample is taken in the reader's listener, on
// Fast DDS's receive thread, and its arrival time read from
// CLOCK_MONOTONIC after the take. A sample stamped EPOCH_NS + k with
// 0 <= k < MESSAGES is message k; a later stamp is a warm-up sample.
//
// Output (stdout): "up N" once every participant exists; "warm I" the
// first time subscriber I gets a warm-up sample; when stdin closes,
// "a I K NS" for every message K subscriber I got (NS: CLOCK_MONOTONIC
// after the take), then "end".
//
// Build (rawtype.hpp beside it): g++ -O2 -std=c++17 fastdds_readers.cpp -o fastdds_readers -lfastrtps -lfastcdr
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>

#include "rawtype.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tcsbench {

namespace dds = eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;
using RC = eprosima::fastrtps::types::ReturnCode_t;
using Bytes = std::vector<uint8_t>;

using tcs2::RawType;

int64_t Monotonic() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::mutex g_out;

void Say(const char* fmt, int i) {
  std::lock_guard<std::mutex> l(g_out);
  std::printf(fmt, i);
  std::fflush(stdout);
}

// Stamp reads a std_msgs/Header's stamp at the start of a CDR sample
// (4-byte encapsulation header, then int32 sec, uint32 nanosec).
bool Stamp(const Bytes& b, int64_t* ns) {
  if (b.size() < 12) return false;
  const bool le = b[1] == 1;
  auto u32 = [&](size_t off) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v |= uint32_t(b[off + (le ? k : 3 - k)]) << (8 * k);
    return v;
  };
  *ns = int64_t(int32_t(u32(4))) * 1000000000 + u32(8);
  return true;
}

// Sub is one subscriber: its arrivals and its listener.
class Sub : public dds::DataReaderListener {
 public:
  Sub(int index, int64_t messages, int64_t epoch) : i_(index), epoch_(epoch), at_(messages, 0) {}

  void on_data_available(dds::DataReader* r) override {
    dds::SampleInfo info;
    while (r->take_next_sample(&b_, &info) == RC::RETCODE_OK) {
      const int64_t now = Monotonic();
      int64_t stamp;
      if (!info.valid_data || !Stamp(b_, &stamp)) continue;
      const int64_t k = stamp - epoch_;
      if (k >= 0 && k < int64_t(at_.size())) {
        if (at_[k] == 0) at_[k] = now;
      } else if (k >= int64_t(at_.size()) && !warm_.exchange(true)) {
        Say("warm %d\n", i_);
      }
    }
  }

  const std::vector<int64_t>& at() const { return at_; }

 private:
  int i_;
  int64_t epoch_;
  std::vector<int64_t> at_;
  std::atomic<bool> warm_{false};
  Bytes b_;
};

dds::Topic* MakeTopic(dds::DomainParticipant* pp, const std::string& name, const std::string& type) {
  if (pp->find_type(type).empty()) dds::TypeSupport(new RawType(type)).register_type(pp);
  return pp->create_topic(name, type, dds::TOPIC_QOS_DEFAULT);
}

dds::DataReaderQos ReaderQos(bool reliable, int depth) {
  dds::DataReaderQos q = dds::DATAREADER_QOS_DEFAULT;
  q.reliability().kind = reliable ? dds::RELIABLE_RELIABILITY_QOS : dds::BEST_EFFORT_RELIABILITY_QOS;
  q.durability().kind = dds::VOLATILE_DURABILITY_QOS;
  q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
  q.history().depth = depth;
  q.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  q.data_sharing().off();
  return q;
}

int Run(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: fastdds_readers MESSAGES EPOCH_NS TOPIC CLOCK_TOPIC...\n");
    return 2;
  }
  const int64_t messages = std::atoll(argv[1]);
  const int64_t epoch = std::atoll(argv[2]);
  const std::string topic = argv[3];
  if (messages <= 0 || messages > 10000000) {
    std::fprintf(stderr, "fastdds_readers: MESSAGES %s out of range\n", argv[1]);
    return 2;
  }
  int domain = 0;
  if (const char* d = std::getenv("ROS_DOMAIN_ID")) domain = std::atoi(d);
  const char* lo = std::getenv("ROS_LOCALHOST_ONLY");
  auto* factory = dds::DomainParticipantFactory::get_instance();
  std::vector<dds::DomainParticipant*> pps;
  std::vector<std::unique_ptr<Sub>> subs;
  for (int i = 4; i < argc; i++) {
    const int idx = i - 4;
    dds::DomainParticipantQos q;
    q.name("bench_sub" + std::to_string(idx));
    const char* ud = "enclave=/;";
    q.user_data().setValue(std::vector<rtps::octet>(ud, ud + std::strlen(ud)));
    if (lo != nullptr && std::string(lo) == "1") {
      auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
      udp->interfaceWhiteList.emplace_back("127.0.0.1");
      q.transport().user_transports.push_back(udp);
      q.transport().use_builtin_transports = false;
    }
    auto* pp = factory->create_participant(domain, q);
    if (pp == nullptr) {
      std::fprintf(stderr, "fastdds_readers: create participant %d on domain %d failed\n", idx, domain);
      return 1;
    }
    pps.push_back(pp);
    auto* sub = pp->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
    auto* ct = MakeTopic(pp, argv[i], "rosgraph_msgs::msg::dds_::Clock_");
    auto* jt = MakeTopic(pp, topic, "sensor_msgs::msg::dds_::JointState_");
    subs.push_back(std::make_unique<Sub>(idx, messages, epoch));
    if (sub == nullptr || ct == nullptr || jt == nullptr || sub->create_datareader(ct, ReaderQos(false, 1)) == nullptr ||
        sub->create_datareader(jt, ReaderQos(true, 100), subs.back().get()) == nullptr) {
      std::fprintf(stderr, "fastdds_readers: create the readers of participant %d failed\n", idx);
      return 1;
    }
  }
  Say("up %d\n", int(pps.size()));
  char buf[256];
  while (std::fgets(buf, sizeof buf, stdin) != nullptr) {
  }
  // Stop the receive threads before reading the arrivals.
  for (auto* pp : pps) {
    pp->delete_contained_entities();
    factory->delete_participant(pp);
  }
  std::lock_guard<std::mutex> l(g_out);
  for (size_t i = 0; i < subs.size(); i++) {
    const auto& at = subs[i]->at();
    for (size_t k = 0; k < at.size(); k++) {
      if (at[k] != 0) std::printf("a %zu %zu %lld\n", i, k, static_cast<long long>(at[k]));
    }
  }
  std::printf("end\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace tcsbench

int main(int argc, char** argv) { return tcsbench::Run(argc, argv); }
