#include "core/duration.h"

#include <chrono>

namespace gpuops::core {

// mirrors HumanDuration, k8s.io/apimachinery/pkg/util/duration/duration.go
std::string human_duration(Duration d) {
  long long seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  auto s = [](long long v) { return std::to_string(v); };
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return s(seconds) + "s";
  long long minutes = seconds / 60;
  if (minutes < 10) return seconds % 60 == 0 ? s(minutes) + "m" : s(minutes) + "m" + s(seconds % 60) + "s";
  if (minutes < 60 * 3) return s(minutes) + "m";
  long long hours = minutes / 60;
  if (hours < 8) return minutes % 60 == 0 ? s(hours) + "h" : s(hours) + "h" + s(minutes % 60) + "m";
  if (hours < 48) return s(hours) + "h";
  if (hours < 24 * 8) return hours % 24 == 0 ? s(hours / 24) + "d" : s(hours / 24) + "d" + s(hours % 24) + "h";
  if (hours < 24 * 365 * 2) return s(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    long long dy = (hours / 24) % 365;
    return dy == 0 ? s(hours / 24 / 365) + "y" : s(hours / 24 / 365) + "y" + s(dy) + "d";
  }
  return s(hours / 24 / 365) + "y";
}

}  // namespace gpuops::core
