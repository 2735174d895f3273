// The calling thread's name, as pthread_setname_np set it (NonIoPool0,
// NonIoTimer, mcbp_io0, …): for tests that assert which thread ran a task or
// a completion.
#pragma once

#include <pthread.h>

#include <string>

namespace syncwrite::test {

inline std::string threadName() {
  char name[16] = {};  // the kernel's limit, with the terminating NUL
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

}  // namespace syncwrite::test
