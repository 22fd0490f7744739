// SPDX-License-Identifier: Apache-2.0
// A pool of worker threads for llama2::Parallel (hosted platforms: std::thread). The calling thread is worker 0
// and works too; workers 1 .. n-1 take part indices from a shared counter, so parts numbered heaviest first
// (edgeattn's order) end close together. Not part of the module: a firmware or an application with its own
// threads implements Parallel::run on those.
//
// Between calls a worker first spins (polling the call counter, with the CPU's pause hint) for `spin_us`
// microseconds, then sleeps on a condition variable. A decode step makes a call every few microseconds to a few
// hundred (stories15M: Q/K/V, attention, wo, gate/up and w2 per layer, then the classifier), and waking a sleeping
// thread costs 10-50 us on the VMs of docs/performance.md: a spinning worker starts within a fraction of a
// microsecond, and Run takes the mutex only when a worker sleeps. The spin ends once the program stops calling
// (sampling, printing, waiting for input), so idle workers sleep.
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_POOL_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_POOL_H_

#include <stddef.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "llama2.h"

namespace llama2 {

class ThreadPool {
 public:
  static constexpr unsigned kDefaultSpinMicroseconds = 200;

  // workers >= 1; starts workers - 1 threads. spin_us 0: workers sleep as soon as a call has ended.
  explicit ThreadPool(size_t workers, unsigned spin_us = kDefaultSpinMicroseconds);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  Parallel parallel() { return Parallel{&ThreadPool::Run, this}; }
  size_t workers() const { return threads_.size() + 1; }

 private:
  static void Run(void* pool, Parallel::PartFn fn, void* job, size_t parts);
  void Work(size_t worker);        // the loop of threads 1 .. n-1
  bool WaitForCall(size_t* seen);  // false: the pool is stopping
  void TakeParts(size_t worker);

  // Each field that one thread writes while another polls has a cache line of its own: a worker polling
  // call_.generation does not slow the caller's writes of next_ and busy_, nor the other way round.
  struct alignas(64) Call {
    std::atomic<size_t> generation{0};  // one per Run; its release publishes fn, job, parts (same line: one transfer)
    Parallel::PartFn fn = nullptr;
    void* job = nullptr;
    size_t parts = 0;
  };
  struct alignas(64) Counter {
    std::atomic<size_t> value{0};
  };

  Call call_;
  Counter next_;      // the next part index to take
  Counter busy_;      // threads still in this generation's parts
  Counter sleepers_;  // workers in (or entering) the condition variable's wait: Run locks the mutex only for them
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // guards the sleeping side, so that no wake-up is lost
  std::condition_variable wake_;
  std::vector<std::thread> threads_;
  const unsigned spin_us_;
};

}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_POOL_H_
