#pragma once
// Runs many independent chat calls through one client on a bounded pool of worker threads.
// Results come back in call-index order whatever order the calls finish in; the client's own
// limits (max_in_flight, request and token rates) apply across the workers.
#include <cstddef>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_client.hpp"

namespace k3lab::api {

// Calls fn(i) for every i in [0, count) on min(workers, count) threads, each taking the next index.
// Waits for all; if any call threw, rethrows the exception of the lowest index.
void for_each_index(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& fn);

// results[i] is the result of requests[i]; its record.call_index is i. workers = 0 means the client's
// max_in_flight. Requests are validated before any is sent (std::invalid_argument names the index).
std::vector<ChatResult> run_calls(const ChatClient& client, const std::vector<nlohmann::json>& requests,
                                  std::size_t workers = 0);

}  // namespace k3lab::api
