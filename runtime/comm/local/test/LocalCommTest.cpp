//===- LocalCommTest.cpp - the in-process communicator -------------------===//
//
// Collectives between threads of one in-process job, and what happens to a
// collective when a rank of the job fails.
//
//===----------------------------------------------------------------------===//

#include "local/InProcessJob.h"

#include "cleave/rt/Runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace cleave::rt;

namespace {

MeshShape dataParallel(int64_t replicas) {
  MeshShape mesh;
  mesh.dp = replicas;
  return mesh;
}

TEST(LocalCommTest, AllReduceSumsEveryRank) {
  InProcessJob job(dataParallel(3), /*timeoutSeconds=*/30);
  std::vector<std::vector<float>> out(3, std::vector<float>(2));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank)
    threads.emplace_back([&, rank] {
      std::vector<float> in = {float(rank), float(10 * rank)};
      job.communicator(rank).allReduce(MeshAxis::Data, in.data(),
                                       out[rank].data(), 2, CLEAVE_F32,
                                       Reduction::Sum);
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::vector<float> &each : out)
    EXPECT_EQ(each, (std::vector<float>{3, 30}));
}

// Rank 0 waits in an all-reduce, another rank fails, and rank 0 leaves the
// collective and frees its input. Rank 1 arriving afterwards must not
// complete the round with rank 0's stale input (reading freed memory): it
// fails too, naming the failure.
TEST(LocalCommTest, RankThatLeftACollectiveIsNotReadAfter) {
  InProcessJob job(dataParallel(2), /*timeoutSeconds=*/5);
  std::string left;
  std::thread first([&] {
    auto in = std::make_unique<std::vector<float>>(4, 1.0f);
    std::vector<float> out(4);
    try {
      job.communicator(0).allReduce(MeshAxis::Data, in->data(), out.data(), 4,
                                    CLEAVE_F32, Reduction::Sum);
    } catch (const std::exception &e) {
      left = e.what();
    }
    // Poison what a late reader would read.
    std::fill(in->begin(), in->end(), 1e30f);
  });
  // Let rank 0 reach the rendezvous before the failure.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  job.fail(1, "a step of rank 1 failed");
  first.join();
  EXPECT_NE(left.find("a step of rank 1 failed"), std::string::npos) << left;

  std::vector<float> in(4, 2.0f), out(4, 0.0f);
  std::string failed;
  try {
    job.communicator(1).allReduce(MeshAxis::Data, in.data(), out.data(), 4,
                                  CLEAVE_F32, Reduction::Sum);
  } catch (const std::exception &e) {
    failed = e.what();
  }
  EXPECT_NE(failed.find("all_reduce stopped: rank 1"), std::string::npos)
      << failed;
  EXPECT_EQ(out, (std::vector<float>(4, 0.0f)));
}

// Members that bring different sizes to one collective (programs that
// disagree on a tensor's layout) are refused by every member, naming both
// sizes, and none copies from another's buffer.
TEST(LocalCommTest, CollectiveOfDifferentSizesIsRefused) {
  InProcessJob job(dataParallel(2), /*timeoutSeconds=*/30);
  std::vector<std::string> errors(2);
  std::vector<std::vector<float>> out(2, std::vector<float>(4, 0.0f));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      std::vector<float> in(4, 1.0f);
      try {
        job.communicator(rank).allReduce(MeshAxis::Data, in.data(),
                                         out[rank].data(), rank ? 4 : 2,
                                         CLEAVE_F32, Reduction::Sum);
      } catch (const std::exception &e) {
        errors[rank] = e.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_NE(errors[0].find("all_reduce along dp: member 0 brings 8 bytes, "
                           "member 1 16"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("all_reduce along dp: member 1 brings 16 bytes, "
                           "member 0 8"),
            std::string::npos)
      << errors[1];
  for (const std::vector<float> &each : out)
    EXPECT_EQ(each, (std::vector<float>(4, 0.0f)));
}

TEST(LocalCommTest, BucketOfReductionsIsWaitedForOncePerBuffer) {
  InProcessJob job(dataParallel(2), /*timeoutSeconds=*/30);
  std::vector<std::vector<float>> first{{1, 2, 3}, {10, 20, 30}};
  std::vector<std::vector<float>> second{{4}, {40}};
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      Communicator &comm = job.communicator(rank);
      auto attempt = [&](auto &&call) {
        try {
          call();
        } catch (const std::exception &e) {
          errors[rank] +=
              std::string(errors[rank].empty() ? "" : " | ") + e.what();
        }
      };
      try {
        // Bucket 7: two buffers, reduced when the second (last) is added;
        // each has its wait.
        comm.startAllReduce(MeshAxis::Data, first[rank].data(), 3, CLEAVE_F32,
                            Reduction::Sum, 7, /*last=*/false);
        attempt([&] { comm.waitAllReduce(7); });
        comm.startAllReduce(MeshAxis::Data, second[rank].data(), 1, CLEAVE_F32,
                            Reduction::Sum, 7, /*last=*/true);
        attempt([&] {
          comm.startAllReduce(MeshAxis::Data, second[rank].data(), 1,
                              CLEAVE_F32, Reduction::Sum, 7, /*last=*/true);
        });
        comm.waitAllReduce(7);
        comm.waitAllReduce(7);
        attempt([&] { comm.waitAllReduce(7); });
        // A buffer of another element type joins no bucket.
        comm.startAllReduce(MeshAxis::Data, first[rank].data(), 3, CLEAVE_F32,
                            Reduction::Max, 8, /*last=*/false);
        attempt([&] {
          comm.startAllReduce(MeshAxis::Data, first[rank].data(), 3, CLEAVE_I32,
                              Reduction::Max, 8, /*last=*/true);
        });
      } catch (const std::exception &e) {
        errors[rank] = std::string("unexpected: ") + e.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(first[rank], (std::vector<float>{11, 22, 33}));
    EXPECT_EQ(second[rank], (std::vector<float>{44}));
    EXPECT_EQ(errors[rank],
              "a wait for reduction 7 before its last buffer was added | "
              "reduction 7 started again before its wait | a wait for "
              "reduction 7, which was not started | reduction 8: a buffer of "
              "another group, element type or reduction than the bucket's "
              "first");
  }
}

} // namespace
