#include "k3lab/api/call_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace k3lab::api {

void for_each_index(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& fn) {
  if (count == 0) return;
  if (workers == 0) throw std::invalid_argument("for_each_index needs at least one worker");
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t n_threads = std::min(workers, count);
  std::vector<std::thread> threads;
  threads.reserve(n_threads);
  for (std::size_t t = 0; t < n_threads; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

std::vector<ChatResult> run_calls(const ChatClient& client, const std::vector<nlohmann::json>& requests,
                                  std::size_t workers) {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      validate_chat_request(requests[i], client.config().allowed_reasoning_efforts);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("request " + std::to_string(i) + ": " + e.what());
    }
  }
  std::vector<ChatResult> results(requests.size());
  const std::size_t n = workers == 0 ? client.config().max_in_flight : workers;
  for_each_index(requests.size(), n, [&](std::size_t i) { results[i] = client.complete(requests[i], i); });
  return results;
}

}  // namespace k3lab::api
