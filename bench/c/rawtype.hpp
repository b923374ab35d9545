// rawtype.hpp: the pieces the Fast DDS programs share (the bench's readers,
// embedded in tcs, and the test programs of test/controllers/ros2): a TopicDataType
// carrying a sample's CDR bytes (encapsulation header included) under any
// ROS 2 type name, and a participant and endpoints configured the way
// rmw_fastrtps_cpp (Humble) configures its own: USER_DATA "enclave=/;",
// ROS_LOCALHOST_ONLY=1 -> UDPv4 on 127.0.0.1 only, keyless topics rt/...,
// type pkg::msg::dds_::T_, no type information, synchronous publication,
// PREALLOCATED_WITH_REALLOC history memory.
#pragma once

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tcs2 {

namespace dds = eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

using Bytes = std::vector<uint8_t>;

// RawType serializes a Bytes holding a whole CDR sample.
class RawType : public dds::TopicDataType {
 public:
  explicit RawType(const std::string& name) {
    setName(name.c_str());
    m_typeSize = 64 * 1024;
    m_isGetKeyDefined = false;
    auto_fill_type_information(false);
    auto_fill_type_object(false);
  }
  bool serialize(void* data, rtps::SerializedPayload_t* payload) override {
    auto* b = static_cast<Bytes*>(data);
    if (b->size() < 4 || b->size() > payload->max_size) return false;
    payload->encapsulation = (*b)[1] == 1 ? CDR_LE : CDR_BE;
    std::memcpy(payload->data, b->data(), b->size());
    payload->length = static_cast<uint32_t>(b->size());
    return true;
  }
  bool deserialize(rtps::SerializedPayload_t* payload, void* data) override {
    auto* b = static_cast<Bytes*>(data);
    b->assign(payload->data, payload->data + payload->length);
    return true;
  }
  std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
    return [data] { return static_cast<uint32_t>(static_cast<Bytes*>(data)->size()); };
  }
  void* createData() override { return new Bytes(); }
  void deleteData(void* data) override { delete static_cast<Bytes*>(data); }
  bool getKey(void*, rtps::InstanceHandle_t*, bool) override { return false; }
};

// DDSType turns pkg/msg/T into pkg::msg::dds_::T_.
inline std::string DDSType(const std::string& ros) {
  auto a = ros.find('/'), b = ros.rfind('/');
  return ros.substr(0, a) + "::" + ros.substr(a + 1, b - a - 1) + "::dds_::" + ros.substr(b + 1) + "_";
}

// Args is what a ROS 2 node takes from --ros-args: -r remaps (from:=to,
// __node, __ns) and -p parameters.
struct Args {
  std::string node = "node", ns = "/";
  std::map<std::string, std::string> remap, params;
  std::vector<std::string> rest;  // arguments outside --ros-args

  Args(int argc, char** argv) {
    bool ros = false;
    for (int i = 1; i < argc; i++) {
      std::string a = argv[i];
      if (a == "--ros-args") { ros = true; continue; }
      if (a == "--") { ros = false; continue; }
      if (ros && (a == "-r" || a == "--remap" || a == "-p" || a == "--param") && i + 1 < argc) {
        std::string kv = argv[++i];
        auto eq = kv.find(":=");
        if (eq == std::string::npos) continue;
        std::string k = kv.substr(0, eq), v = kv.substr(eq + 2);
        if (a == "-p" || a == "--param") params[k] = v;
        else if (k == "__node" || k == "__name") node = v;
        else if (k == "__ns") ns = v;
        else remap[k] = v;
        continue;
      }
      if (!ros) rest.push_back(a);
    }
  }
  // Resolve makes a topic absolute in the namespace, then remaps it.
  std::string Resolve(const std::string& t) const {
    std::string abs = t[0] == '/' ? t : (ns == "/" ? "/" + t : ns + "/" + t);
    auto it = remap.find(abs);
    if (it == remap.end()) it = remap.find(t);
    return it == remap.end() ? abs : it->second;
  }
  double Param(const std::string& k, double def) const {
    auto it = params.find(k);
    return it == params.end() ? def : std::atof(it->second.c_str());
  }
};

// Node is one participant with rmw_fastrtps's configuration.
class Node {
 public:
  explicit Node(const std::string& name) {
    dds::DomainParticipantQos q;
    q.name(name);
    const char* ud = "enclave=/;";
    q.user_data().setValue(std::vector<rtps::octet>(ud, ud + std::strlen(ud)));
    const char* lo = std::getenv("ROS_LOCALHOST_ONLY");
    if (lo != nullptr && std::string(lo) == "1") {
      auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
      udp->interfaceWhiteList.emplace_back("127.0.0.1");
      q.transport().user_transports.push_back(udp);
      q.transport().use_builtin_transports = false;
    }
    int domain = 0;
    if (const char* d = std::getenv("ROS_DOMAIN_ID")) domain = std::atoi(d);
    pp_ = dds::DomainParticipantFactory::get_instance()->create_participant(domain, q);
    if (pp_ == nullptr) throw std::runtime_error("create_participant failed");
    pub_ = pp_->create_publisher(dds::PUBLISHER_QOS_DEFAULT);
    sub_ = pp_->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
  }
  ~Node() {
    pp_->delete_contained_entities();
    dds::DomainParticipantFactory::get_instance()->delete_participant(pp_);
  }

  dds::Topic* Topic(const std::string& dds_name, const std::string& ros_type) {
    std::string t = DDSType(ros_type);
    if (pp_->find_type(t).empty()) dds::TypeSupport(new RawType(t)).register_type(pp_);
    if (auto* d = pp_->lookup_topicdescription(dds_name)) return static_cast<dds::Topic*>(d);
    return pp_->create_topic(dds_name, t, dds::TOPIC_QOS_DEFAULT);
  }

  dds::DataWriter* Writer(const std::string& dds_name, const std::string& type, bool reliable, bool tl, int depth) {
    dds::DataWriterQos q = dds::DATAWRITER_QOS_DEFAULT;
    Endpoint(q, reliable, tl, depth);
    q.publish_mode().kind = dds::SYNCHRONOUS_PUBLISH_MODE;
    return pub_->create_datawriter(Topic(dds_name, type), q);
  }

  dds::DataReader* Reader(const std::string& dds_name, const std::string& type, bool reliable, bool tl, int depth,
                          dds::DataReaderListener* l) {
    dds::DataReaderQos q = dds::DATAREADER_QOS_DEFAULT;
    Endpoint(q, reliable, tl, depth);
    return sub_->create_datareader(Topic(dds_name, type), q, l);
  }

  dds::DomainParticipant* participant() { return pp_; }

 private:
  template <typename Q>
  static void Endpoint(Q& q, bool reliable, bool tl, int depth) {
    q.reliability().kind = reliable ? dds::RELIABLE_RELIABILITY_QOS : dds::BEST_EFFORT_RELIABILITY_QOS;
    q.durability().kind = tl ? dds::TRANSIENT_LOCAL_DURABILITY_QOS : dds::VOLATILE_DURABILITY_QOS;
    q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
    q.history().depth = depth;
    q.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    q.data_sharing().off();
  }

  dds::DomainParticipant* pp_;
  dds::Publisher* pub_;
  dds::Subscriber* sub_;
};

}  // namespace tcs2
