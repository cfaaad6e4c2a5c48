// The commands that poll experiments::stop_flag() and so end cleanly on SIGINT/SIGTERM; every other
// command keeps the default action (a stop ends it at once, as any program).
#include <set>
#include <string_view>

#include "cli/commands.hpp"

namespace k3lab::cli {

bool handles_stop_signals(int argc, char** argv) {
  static const std::set<std::string_view> kStoppable = {"run", "mock-server", "check-endpoint"};
  return argc >= 2 && kStoppable.count(argv[1]) > 0;
}

}  // namespace k3lab::cli
