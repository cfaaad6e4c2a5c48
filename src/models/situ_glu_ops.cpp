#include <k3lab/models/situ_glu_ops.hpp>

#include <map>
#include <mutex>

namespace k3lab::models {

namespace {

struct SituGluRegistry {
  std::mutex mutex;
  std::map<c10::DeviceType, SituGluImpl> impls;
};

SituGluRegistry& registry() {
  static SituGluRegistry instance;
  return instance;
}

SituGluImpl find_impl(c10::DeviceType device) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.impls.find(device);
  return it == r.impls.end() ? SituGluImpl{} : it->second;
}

}  // namespace

void register_situ_glu_impl(c10::DeviceType device, SituGluImpl impl) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (impl) {
    r.impls[device] = std::move(impl);
  } else {
    r.impls.erase(device);
  }
}

bool has_situ_glu_impl(c10::DeviceType device) { return static_cast<bool>(find_impl(device)); }

torch::Tensor situ_glu_op(const torch::Tensor& gate, const torch::Tensor& up, double beta_gate,
                          double beta_up) {
  if (gate.defined()) {
    if (auto impl = find_impl(gate.device().type())) return impl(SituGluArgs{gate, up, beta_gate, beta_up});
  }
  return situ_glu(gate, up, beta_gate, beta_up);
}

}  // namespace k3lab::models
