#pragma once
// The repository family's pinned real repository (parameters.repository), loaded and verified once per
// process: its hash list lives beside the protocols (core::protocol_dir()), its files where the Debian
// package installed them. Errors are load_pinned_repository's (validate/repo_snapshot.hpp).
#include <memory>

#include "k3lab/validate/repo_snapshot.hpp"

namespace k3lab::experiments::context_probe {

std::shared_ptr<const validate::RepositorySnapshot> pinned_repository(const validate::RepositoryPin& pin);

}  // namespace k3lab::experiments::context_probe
