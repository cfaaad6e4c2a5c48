#pragma once
// A write to a peer that has died must fail with EPIPE, not end the process with SIGPIPE: a data-parallel
// rank whose peer dies while it sends (gloo writes with writev, which cannot ask the kernel not to signal)
// would otherwise die silently, without the rank-failure note the trainer writes for a failed collective.

namespace k3lab::core {

// Installs a SIGPIPE handler that does nothing, so a broken pipe or socket shows up as EPIPE on the
// write. A handler rather than SIG_IGN: exec resets handlers, so the programs k3lab starts still get
// SIGPIPE's default, while an ignored signal would stay ignored in them.
void survive_broken_pipes();

}  // namespace k3lab::core
