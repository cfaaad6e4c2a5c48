#include "k3lab/core/broken_pipe.hpp"

#include <signal.h>

namespace k3lab::core {
namespace {

extern "C" void swallow_broken_pipe(int) {}

}  // namespace

void survive_broken_pipes() {
  struct sigaction action {};
  action.sa_handler = swallow_broken_pipe;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
}

}  // namespace k3lab::core
