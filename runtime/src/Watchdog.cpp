//===- Watchdog.cpp - a bound on how long one call may run
//-----------------===//

#include "Watchdog.h"

#include <cstdio>

namespace cleave::rt {

Watchdog::Watchdog(double seconds,
                   std::function<void(const std::string &)> expire)
    : seconds(seconds), expire(std::move(expire)) {
  thread = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  thread.join();
}

void Watchdog::begin(const char *newOp, const char *newNode) {
  std::lock_guard<std::mutex> lock(mutex);
  active = true;
  started = Clock::now();
  op = newOp ? newOp : "";
  node = newNode ? newNode : "";
}

void Watchdog::end() {
  std::lock_guard<std::mutex> lock(mutex);
  active = false;
}

void Watchdog::watch() {
  auto limit = std::chrono::duration<double>(seconds);
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    // Waking ten times a second keeps the bound tight without a timer per
    // activity.
    wake.wait_for(lock, std::chrono::milliseconds(100));
    if (stopping || !active || Clock::now() - started < limit)
      continue;
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%gs", seconds);
    std::string message = std::string("timed out after ") + elapsed + " in " +
                          op + (node.empty() ? "" : " (node " + node + ")");
    active = false;
    lock.unlock();
    expire(message);
    lock.lock();
  }
}

} // namespace cleave::rt
