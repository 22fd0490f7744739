#include "llama2_pool.h"

namespace llama2 {

ThreadPool::ThreadPool(size_t workers) {
  for (size_t w = 1; w < workers; ++w) threads_.emplace_back(&ThreadPool::Work, this, w);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::TakeParts(size_t worker) {
  for (size_t part = next_.fetch_add(1); part < parts_; part = next_.fetch_add(1)) fn_(job_, part, worker);
}

void ThreadPool::Work(size_t worker) {
  size_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    TakeParts(worker);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_ == 0) done_.notify_one();
  }
}

void ThreadPool::Run(void* pool, Parallel::PartFn fn, void* job, size_t parts) {
  ThreadPool* self = static_cast<ThreadPool*>(pool);
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->fn_ = fn;
    self->job_ = job;
    self->parts_ = parts;
    self->next_.store(0);
    self->busy_ = self->threads_.size();
    ++self->generation_;
  }
  self->wake_.notify_all();
  self->TakeParts(0);
  std::unique_lock<std::mutex> lock(self->mutex_);
  self->done_.wait(lock, [self] { return self->busy_ == 0; });
}

}  // namespace llama2
