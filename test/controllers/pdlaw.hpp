// pdlaw.hpp: controllers/pdlaw.go's DefaultPD (swing-up by energy pumping,
// PD near the target) for the C++ test controllers (roscpp/pd.cpp and
// ros2/fastdds_pd.cpp). Header-only; included as "../pdlaw.hpp".
#pragma once

#include <algorithm>
#include <cmath>

namespace pdlaw {

// controllers.DefaultPD()
constexpr double kKp = 40;        // N*m/rad
constexpr double kKd = 8;         // N*m*s/rad
constexpr double kKe = 2;         // N*m/J
constexpr double kCatch = 0.5;    // rad
constexpr double kMaxTorque = 5;  // N*m
constexpr double kMass = 1;       // kg
constexpr double kLength = 1;     // m
constexpr double kGravity = 9.81; // m/s^2

// WrapAngle maps a to (-pi, pi] (NaN for NaN and infinities).
inline double WrapAngle(double a) {
  a = std::fmod(a + M_PI, 2 * M_PI);
  if (a <= 0) a += 2 * M_PI;
  return a - M_PI;
}

// Torque is a port of controllers.PD.Torque with DefaultPD's gains.
inline double Torque(double theta, double thetadot, double target) {
  const double e = WrapAngle(theta - target);
  double u;
  if (std::fabs(e) < kCatch) {
    u = -kKp * e - kKd * thetadot;
  } else {
    const double inertia = kMass * kLength * kLength;
    const double mgl = kMass * kGravity * kLength;
    const double energy = 0.5 * inertia * thetadot * thetadot - mgl * std::cos(theta);
    const double want = -mgl * std::cos(target);
    double dir = 1.0;  // pump along the motion; kick forward from rest
    if (thetadot < 0) dir = -1;
    u = kKe * (want - energy) * dir;
  }
  if (std::isnan(u)) return 0;
  return std::max(-kMaxTorque, std::min(kMaxTorque, u));
}

}  // namespace pdlaw
