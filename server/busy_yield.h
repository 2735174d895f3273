// BusyYield: an I/O thread that has run for a whole slice (kSlice) without
// sleeping lets the threads that wait for its CPU run first (sched_yield),
// at the points where its connections already give way to each other: a
// turn that stopped at Connection::kRequestsPerTurn, a drain of late answers.
//
// Why. On the benchmark machine's kernel (CONFIG_HZ=250,
// CONFIG_PREEMPT_NONE; docs/benchmarks.md), a thread that wakes while every
// core runs another often waits until one of them sleeps or uses up its time
// slice, which the kernel checks at the tick, every 4 ms. When runnable
// threads outnumber the cores (both I/O threads busy with a storm of
// pipelined writes, the NonIO workers, clients on the same machine), a light
// client's request waited one or two ticks at each hop: for the I/O thread
// to run its read, then for the client to run the answer. perf sched over
// bench/timeout_storm put most of each bystander stall over 5 ms in such
// waits, and under a millisecond in the server's own queues
// (docs/benchmarks.md, "Bystander stalls are the scheduler's"). A busy I/O
// thread that yields after a slice holds the others back by about the
// slice, not by the tick.
//
// Sleeping is read from the thread's count of voluntary context switches
// (getrusage(RUSAGE_THREAD).ru_nvcsw), once a slice has passed on the clock:
// if the count moved during the slice, the thread blocked (epoll_wait, a
// lock) at some point of it, and a new slice starts; otherwise it yields.
// The slice is wall-clock time: a thread preempted without sleeping keeps
// its slice running (it never ran out of work), so after a long preemption
// it yields at its next point having itself run less than a slice. And it
// yields only at a yield point: an I/O thread whose turns all stay under
// the budget and that drains nothing never does.
//
// Cost: a clock read per yield point (a turn of kRequestsPerTurn requests,
// a drain), and at most one getrusage call per slice. Reading the count at
// every point cost 7% more server CPU per GET at 32 in flight: a system
// call per turn is dear on a virtual machine. sched_yield returns at once
// when no thread waits for the CPU.
//
// Threading: an instance is one thread's state and is not shared;
// forThisThread() gives each thread its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace syncwrite::server {

class BusyYield {
 public:
  // How long a thread runs without sleeping before it yields. A quarter of
  // a 4 ms tick: what a waiting thread still waits stays a small part of
  // issue 23's 10 ms bound, and at most one yield and one getrusage per
  // millisecond of work showed no cost beyond the noise of the side-by-side
  // rows (0.96-1.00x of the ops/s before it; docs/benchmarks.md).
  static constexpr std::chrono::microseconds kSlice{1000};

  // Where the state comes from: the kernel's (kernel()), or a test's.
  struct Sources {
    std::function<uint64_t()> voluntary_switches;
    std::function<std::chrono::steady_clock::time_point()> now;
    std::function<void()> yield;
  };
  // getrusage(RUSAGE_THREAD).ru_nvcsw, steady_clock, sched_yield.
  static Sources kernel();

  explicit BusyYield(std::chrono::nanoseconds slice = kSlice, Sources sources = kernel());

  // At a yield point: yields when a slice has passed since the last yield
  // (or the first call) and the thread has not slept since the slice began
  // (see above). True if it yielded.
  bool atYieldPoint();

  // The calling thread's own instance (kSlice, the kernel's sources).
  static BusyYield& forThisThread();

 private:
  const std::chrono::nanoseconds slice_;
  const Sources sources_;
  std::optional<uint64_t> seen_switches_;
  std::chrono::steady_clock::time_point slice_start_;
};

}  // namespace syncwrite::server
