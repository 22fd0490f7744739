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
  for (size_t part = next_.fetch_add(1); part < parts_; part = next_.fetch_add(1)) fn_(job_, part, worker);
}

bool ThreadPool::WaitForCall(size_t* seen) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(spin_us_);
  for (unsigned i = 1; spin_us_ != 0; ++i) {
    if (stop_.load(std::memory_order_acquire)) return false;
    const size_t generation = generation_.load(std::memory_order_acquire);
    if (generation != *seen) {
      *seen = generation;
      return true;
    }
    if (i % 64 == 0) {  // about a microsecond of polls: the clock, and the CPU to any thread that waits for it
      if (Clock::now() >= deadline) break;
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait(lock, [&] { return stop_.load() || generation_.load() != *seen; });
  if (stop_.load()) return false;
  *seen = generation_.load();
  return true;
}

void ThreadPool::Work(size_t worker) {
  size_t seen = 0;
  while (WaitForCall(&seen)) {
    TakeParts(worker);
    busy_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::Run(void* pool, Parallel::PartFn fn, void* job, size_t parts) {
  ThreadPool* self = static_cast<ThreadPool*>(pool);
  // Every worker has left the previous call (busy_ reached 0), so none reads these while they change.
  self->fn_ = fn;
  self->job_ = job;
  self->parts_ = parts;
  self->next_.store(0, std::memory_order_relaxed);
  self->busy_.store(self->threads_.size(), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->generation_.fetch_add(1, std::memory_order_release);
  }
  self->wake_.notify_all();  // no system call when no worker sleeps
  self->TakeParts(0);
  // Waits for the workers to leave the parts: polling, yielding the CPU now and then in case a worker waits for
  // it (more threads than cores).
  for (unsigned i = 1; self->busy_.load(std::memory_order_acquire) != 0; ++i) {
    if (i % 256 == 0) {
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
}

}  // namespace llama2
