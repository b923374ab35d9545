// golden: prints, for fixed values, the CDR samples Fast DDS's fastcdr
// (Debian libfastcdr-dev) writes for every ROS 2 type tcs encodes, one line
// per case: "name hex". The values are those of golden_test.go; the fields
// are serialized in the order and with the calls rosidl's fastrtps type
// support generates (rosidl_typesupport_fastrtps_cpp), behind the
// encapsulation header as rmw_fastrtps writes it.
//
// Build: g++ -std=c++17 golden.cpp -o golden -lfastcdr
#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <array>
#include <limits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;

namespace {

char storage[1 << 16];

template <typename F>
void Emit(const char* name, F body) {
  // fastcdr leaves padding bytes as it finds them (CDR does not specify
  // them): start from zeros so that they compare.
  std::memset(storage, 0, sizeof storage);
  FastBuffer fb(storage, sizeof storage);
  Cdr cdr(fb, Cdr::LITTLE_ENDIANNESS, Cdr::DDS_CDR);
  cdr.serialize_encapsulation();
  body(cdr);
  std::printf("%s ", name);
  for (size_t i = 0; i < cdr.getSerializedDataLength(); i++) std::printf("%02x", static_cast<unsigned char>(storage[i]));
  std::printf("\n");
}

void Time(Cdr& c, int32_t sec, uint32_t nsec) { c << sec << nsec; }
void Header(Cdr& c, int32_t sec, uint32_t nsec, const std::string& frame) {
  Time(c, sec, nsec);
  c << frame;
}
void Vec(Cdr& c, double x, double y, double z) { c << x << y << z; }

}  // namespace

int main() {
  Emit("clock", [](Cdr& c) { Time(c, 12, 345678901); });
  Emit("clock0", [](Cdr& c) { Time(c, 0, 10000000); });
  Emit("float64", [](Cdr& c) { c << -1.25; });
  Emit("multiarray", [](Cdr& c) {
    c << static_cast<uint32_t>(1);  // layout.dim
    c << std::string("torque") << static_cast<uint32_t>(2) << static_cast<uint32_t>(2);
    c << static_cast<uint32_t>(0);  // layout.data_offset
    c << std::vector<double>{0.5, -3};
  });
  Emit("multiarray_empty", [](Cdr& c) {
    c << static_cast<uint32_t>(0) << static_cast<uint32_t>(0) << std::vector<double>{};
  });
  Emit("jointstate", [](Cdr& c) {
    Header(c, 1, 500, "base");
    c << std::vector<std::string>{"pendulum_joint", "j2"};
    c << std::vector<double>{3.14, 0.1} << std::vector<double>{-2.5, 7} << std::vector<double>{};
  });
  Emit("jointstate_noframe", [](Cdr& c) {
    Header(c, 1, 0, "");
    c << std::vector<std::string>{"a"};
    c << std::vector<double>{1} << std::vector<double>{2} << std::vector<double>{};
  });
  Emit("imu", [](Cdr& c) {
    Header(c, 2, 5, "imu_link");
    c << 0.5 << -0.5 << 0.5 << 0.5;
    std::array<double, 9> known{}, unknown{};
    unknown[0] = -1;
    c << known;
    Vec(c, 0.1, 0.2, -0.3);
    c << unknown;
    Vec(c, 0, 0.25, 9.81);
    c << known;
  });
  Emit("wrench", [](Cdr& c) {
    Header(c, 3, 0, "wrist");
    Vec(c, 1, -2, 3.5);
    Vec(c, 0, 0.125, -1);
  });
  Emit("range", [](Cdr& c) {
    Header(c, 4, 999999999, "front");
    c << uint8_t(1) << 0.0f << 0.0f << std::numeric_limits<float>::infinity() << 2.75f << 0.0f;
  });
  Emit("twist", [](Cdr& c) {
    Vec(c, 1, 2, 3);
    Vec(c, -0.5, 0, 0.25);
  });
  Emit("odometry", [](Cdr& c) {
    Header(c, 7, 8, "odom");
    c << std::string("base_link");
    Vec(c, 1.5, -2, 0);
    c << 0.0 << 0.0 << 0.38268343236 << 0.92387953251;
    std::array<double, 36> cov{};
    for (int i = 0; i < 36; i++) cov[i] = i * 0.01;
    c << cov;
    Vec(c, 0.3, 0, 0);
    Vec(c, 0, 0, -0.1);
    std::array<double, 36> cov2{};
    cov2[0] = 1;
    cov2[35] = 2;
    c << cov2;
  });
  Emit("laserscan", [](Cdr& c) {
    Header(c, 3, 999999999, "laser");
    c << -1.5f << 1.5f << 0.75f << 0.0f << 0.1f << 0.05f << 30.0f;
    c << std::vector<float>{1, 2.5f, 30, 0.125f, 4} << std::vector<float>{};
  });
  Emit("diagnostics", [](Cdr& c) {
    Header(c, 2, 0, "");
    c << static_cast<uint32_t>(2);
    c << static_cast<uint8_t>(0) << std::string("tcs: run") << std::string("consistent") << std::string("host");
    c << static_cast<uint32_t>(2);
    c << std::string("virtual_s") << std::string("1") << std::string("drift_s") << std::string("0.00012");
    c << static_cast<uint8_t>(1) << std::string("tcs: arm/pd") << std::string("running") << std::string("host");
    c << static_cast<uint32_t>(0);
  });
  Emit("diagnostic_status", [](Cdr& c) {
    c << static_cast<uint8_t>(1) << std::string("tcs") << std::string("playing, deadline misses") << std::string("");
    c << static_cast<uint32_t>(2);
    c << std::string("state") << std::string("playing") << std::string("real_time_factor") << std::string("0.5");
  });
  for (int len : {24, 16}) {
    Emit(len == 24 ? "discovery_humble" : "discovery_iron", [len](Cdr& c) {
      auto gid = [&c, len](int seed) {
        std::array<uint8_t, 24> g{};
        for (int i = 0; i < 16; i++) g[i] = static_cast<uint8_t>(seed + i);
        c.serializeArray(g.data(), len);
      };
      gid(1);
      c << static_cast<uint32_t>(1);
      c << std::string("/") << std::string("tcs");
      c << static_cast<uint32_t>(1);
      gid(40);
      c << static_cast<uint32_t>(2);
      gid(80);
      gid(120);
    });
  }
  return 0;
}
