// SPDX-License-Identifier: Apache-2.0
#include "llama2_pool.h"

#include <chrono>

namespace llama2 {
namespace {

// The spin loop's hint: lets the sibling hyperthread run and saves power while polling.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(size_t workers, unsigned spin_us) : spin_us_(spin_us) {
  threads_.reserve(workers > 0 ? workers - 1 : 0);
  for (size_t w = 1; w < workers; ++w) threads_.emplace_back(&ThreadPool::Work, this, w);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::TakeParts(size_t worker) {
  const Parallel::PartFn fn = call_.fn;
  void* const job = call_.job;
  const size_t parts = call_.parts;
  for (size_t part = next_.value.fetch_add(1); part < parts; part = next_.value.fetch_add(1)) fn(job, part, worker);
}

bool ThreadPool::WaitForCall(size_t* seen) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(spin_us_);
  for (unsigned i = 1; spin_us_ != 0; ++i) {
    const size_t generation = call_.generation.load(std::memory_order_acquire);
    if (generation != *seen) {
      *seen = generation;
      return true;
    }
    if (i % 64 == 0) {  // about a microsecond of polls: the stop flag, the clock, and the CPU to any thread that
                        // waits for it
      if (stop_.load(std::memory_order_acquire) || Clock::now() >= deadline) break;
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // Announced before the generation is read again (both sequentially consistent): either this read sees Run's
  // new generation, or Run sees this worker among the sleepers and notifies under the mutex.
  sleepers_.value.fetch_add(1);
  wake_.wait(lock, [&] { return stop_.load() || call_.generation.load() != *seen; });
  sleepers_.value.fetch_sub(1);
  if (stop_.load()) return false;
  *seen = call_.generation.load();
  return true;
}

void ThreadPool::Work(size_t worker) {
  size_t seen = 0;
  while (WaitForCall(&seen)) {
    TakeParts(worker);
    busy_.value.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::Run(void* pool, Parallel::PartFn fn, void* job, size_t parts) {
  ThreadPool* self = static_cast<ThreadPool*>(pool);
  // Every worker has left the previous call (busy_ reached 0), so none reads these while they change.
  self->call_.fn = fn;
  self->call_.job = job;
  self->call_.parts = parts;
  self->next_.value.store(0, std::memory_order_relaxed);
  self->busy_.value.store(self->threads_.size(), std::memory_order_relaxed);
  self->call_.generation.fetch_add(1);  // sequentially consistent: ordered before the read of sleepers_
  if (self->sleepers_.value.load() != 0) {
    // A sleeping worker: the mutex orders this wake-up after its wait began (no system call otherwise).
    { std::lock_guard<std::mutex> lock(self->mutex_); }
    self->wake_.notify_all();
  }
  self->TakeParts(0);
  // Waits for the workers to leave the parts: polling, yielding the CPU now and then in case a worker waits for
  // it (more threads than cores).
  for (unsigned i = 1; self->busy_.value.load(std::memory_order_acquire) != 0; ++i) {
    if (i % 256 == 0) {
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
}

}  // namespace llama2
