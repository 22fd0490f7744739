// A pool of worker threads for llama2::Parallel (hosted platforms: std::thread). The calling thread is worker 0
// and works too; workers 1 .. n-1 wait on a condition variable between calls and take part indices from a shared
// counter, so parts numbered heaviest first (edgeattn's order) end close together. Not part of the module: a
// firmware or an application with its own threads implements Parallel::run on those.
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
  explicit ThreadPool(size_t workers);  // workers >= 1; starts workers - 1 threads
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  Parallel parallel() { return Parallel{&ThreadPool::Run, this}; }
  size_t workers() const { return threads_.size() + 1; }

 private:
  static void Run(void* pool, Parallel::PartFn fn, void* job, size_t parts);
  void Work(size_t worker);  // the loop of threads 1 .. n-1
  void TakeParts(size_t worker);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  size_t generation_ = 0;  // one per Run
  size_t busy_ = 0;        // threads still working on this generation
  bool stop_ = false;
  Parallel::PartFn fn_ = nullptr;
  void* job_ = nullptr;
  size_t parts_ = 0;
  std::atomic<size_t> next_{0};
};

}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_POOL_H_
