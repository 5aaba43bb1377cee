//===- InProcessRun.cpp - every rank of a bundle in this process
//-----------===//

#include "InProcessRun.h"

#include "Bundle.h"
#include "local/InProcessJob.h"

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

namespace cleave::rt {

int runRanksInProcess(
    const Manifest &manifest, double timeoutSeconds,
    const std::function<int(int rank, Communicator &comm)> &runRank) {
  InProcessJob job(manifest.mesh(), timeoutSeconds);

  std::vector<int> status(job.size(), 0);
  auto report = [&](int rank, const std::string &reason) {
    status[rank] = 2;
    // A rank stopped by another's failure says nothing new.
    if (!job.fail(rank, reason))
      return;
    DevicePlace place = DevicePlace::of(manifest.mesh(), rank);
    std::fflush(stdout);
    std::fprintf(stderr, "cleave run: error: rank %d (stage %d, tp %d): %s\n",
                 place.rank, place.stage, place.tp, reason.c_str());
    std::fflush(stderr);
  };
  std::vector<std::thread> threads;
  for (int rank = 0; rank < job.size(); ++rank)
    threads.emplace_back([&, rank] {
      try {
        status[rank] = runRank(rank, job.communicator(rank));
      } catch (const std::exception &e) {
        report(rank, e.what());
      } catch (...) {
        report(rank, "unknown failure");
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  return *std::max_element(status.begin(), status.end());
}

} // namespace cleave::rt
