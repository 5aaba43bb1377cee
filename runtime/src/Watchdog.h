//===- Watchdog.h - a bound on how long one call may run ---------*- C++
//-*-===//
//
// A device of a bundle for several devices that waits forever for a peer
// that died, or runs a step that never ends, would hang the whole job. The
// watchdog times the current activity (a program step or a communication
// call) from its own thread and, past the limit, reports it once so that the
// job can be ended.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_WATCHDOG_H
#define CLEAVE_RT_SRC_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace cleave::rt {

class Watchdog {
public:
  /// `expire` is called from the watchdog's thread with
  /// "timed out after Ns in OP (node NAME)" when one activity has run
  /// longer than `seconds`.
  Watchdog(double seconds, std::function<void(const std::string &)> expire);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// Starts timing `op` ("step", "recv", ...) at the ONNX node `node`.
  void begin(const char *op, const char *node);
  /// Stops timing until the next begin().
  void end();

private:
  void watch();

  using Clock = std::chrono::steady_clock;
  double seconds;
  std::function<void(const std::string &)> expire;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool active = false;
  Clock::time_point started;
  std::string op;
  std::string node;
  std::thread thread;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_WATCHDOG_H
