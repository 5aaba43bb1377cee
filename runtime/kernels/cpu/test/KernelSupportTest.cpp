//===- KernelSupportTest.cpp - the kernels' OpenMP loops and regions ------===//
//
// parallelFor and parallelRegion fork a team only for more than one thread
// and work judged worth it; otherwise they run on the calling thread,
// outside any OpenMP region (libgomp allocates a team at every region it
// enters, even a team of one). omp_get_level() counts the regions around
// the caller, a region of one thread included.
//
//===----------------------------------------------------------------------===//

#include "../KernelSupport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include <omp.h>

namespace {

struct Case {
  int threads;
  bool worth;
  bool forks;
};

const Case kCases[] = {{1, true, false}, {2, false, false}, {2, true, true}};

TEST(KernelSupportTest, ParallelForForksOnlyWhereItShould) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::to_string(c.threads) + " threads, worth " +
                 std::to_string(c.worth));
    constexpr int64_t n = 16;
    std::vector<int> inRegion(n, -1), team(n, 0), runs(n, 0);
    cleave::cpu::parallelFor(c.threads, c.worth, n, [&](int64_t i) {
      inRegion[i] = omp_get_level();
      team[i] = omp_get_num_threads();
      ++runs[i];
    });
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(runs[i], 1) << i;
      EXPECT_EQ(inRegion[i], c.forks ? 1 : 0) << i;
      EXPECT_EQ(team[i], c.forks ? c.threads : 1) << i;
    }
  }
}

TEST(KernelSupportTest, ParallelRegionSplitsItsLoopsOnlyWhereItForks) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::to_string(c.threads) + " threads, worth " +
                 std::to_string(c.worth));
    constexpr int64_t n = 16;
    std::vector<int> runs(n, 0), thread(n, -1), inRegion(n, -1);
    cleave::cpu::parallelRegion(c.threads, c.worth, [&] {
#pragma omp for
      for (int64_t i = 0; i < n; ++i) {
        ++runs[i];
        thread[i] = omp_get_thread_num();
        inRegion[i] = omp_get_level();
      }
    });
    bool secondThread = false;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(runs[i], 1) << i;
      EXPECT_EQ(inRegion[i], c.forks ? 1 : 0) << i;
      secondThread |= thread[i] == 1;
    }
    EXPECT_EQ(secondThread, c.forks);
  }
}

} // namespace

// Waiting threads spin unless OMP_WAIT_POLICY is PASSIVE (in any case) or
// GOMP_SPINCOUNT is 0, as libgomp reads them; the work below which a loop
// or a product stays on one thread is an eighth where they spin.
TEST(KernelSupportTest, ThreadsSpinAsLibgompReadsTheEnvironment) {
  using namespace cleave::cpu;
  EXPECT_TRUE(waitsSpin(nullptr, nullptr));
  EXPECT_TRUE(waitsSpin("ACTIVE", nullptr));
  EXPECT_TRUE(waitsSpin(nullptr, "30000"));
  EXPECT_TRUE(waitsSpin(nullptr, "infinite"));
  EXPECT_FALSE(waitsSpin("PASSIVE", nullptr));
  EXPECT_FALSE(waitsSpin("passive", "30000"));
  EXPECT_FALSE(waitsSpin(nullptr, "0"));
  EXPECT_EQ(threadsSpin(), waitsSpin(std::getenv("OMP_WAIT_POLICY"),
                                     std::getenv("GOMP_SPINCOUNT")));
  EXPECT_EQ(kParallelGrain, threadsSpin() ? (1 << 16) / 8 : 1 << 16);
  EXPECT_EQ(kParallelProductWork, threadsSpin() ? (1 << 19) / 8 : 1 << 19);
}
