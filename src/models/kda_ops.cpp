#include <k3lab/models/kda_ops.hpp>

#include <map>
#include <mutex>

namespace k3lab::models {

namespace {

// Registrations happen at start-up, lookups on every call: a mutex is cheap next to a KDA pass.
template <typename Impl>
class Registry {
 public:
  void set(c10::DeviceType device, Impl impl) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (impl) {
      impls_[device] = std::move(impl);
    } else {
      impls_.erase(device);
    }
  }
  Impl find(c10::DeviceType device) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = impls_.find(device);
    return it == impls_.end() ? Impl{} : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<c10::DeviceType, Impl> impls_;
};

Registry<KdaChunkwiseImpl>& chunkwise_registry() {
  static Registry<KdaChunkwiseImpl> registry;
  return registry;
}

Registry<KdaDecodeImpl>& decode_registry() {
  static Registry<KdaDecodeImpl> registry;
  return registry;
}

}  // namespace

void register_kda_chunkwise_impl(c10::DeviceType device, KdaChunkwiseImpl impl) {
  chunkwise_registry().set(device, std::move(impl));
}

void register_kda_decode_impl(c10::DeviceType device, KdaDecodeImpl impl) {
  decode_registry().set(device, std::move(impl));
}

bool has_kda_chunkwise_impl(c10::DeviceType device) {
  return static_cast<bool>(chunkwise_registry().find(device));
}

bool has_kda_decode_impl(c10::DeviceType device) {
  return static_cast<bool>(decode_registry().find(device));
}

KdaResult kda_chunkwise_op(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const torch::Tensor& g, const torch::Tensor& beta,
                           const std::optional<torch::Tensor>& initial_state,
                           std::int64_t chunk_size, std::optional<double> scale) {
  if (q.defined()) {
    if (auto impl = chunkwise_registry().find(q.device().type())) {
      KdaChunkwiseArgs args;
      args.q = q;
      args.k = k;
      args.v = v;
      args.g = g;
      args.beta = beta;
      args.initial_state = initial_state;
      args.chunk_size = chunk_size;
      args.scale = scale;
      return impl(args);
    }
  }
  return kda_chunkwise(q, k, v, g, beta, initial_state, chunk_size, scale);
}

KdaResult kda_decode_op(const torch::Tensor& q_t, const torch::Tensor& k_t,
                        const torch::Tensor& v_t, const torch::Tensor& g_t,
                        const torch::Tensor& beta_t, const torch::Tensor& state,
                        std::optional<double> scale) {
  if (q_t.defined()) {
    if (auto impl = decode_registry().find(q_t.device().type())) {
      return impl(KdaDecodeArgs{q_t, k_t, v_t, g_t, beta_t, state, scale});
    }
  }
  return kda_decode_step(q_t, k_t, v_t, g_t, beta_t, state, scale);
}

}  // namespace k3lab::models
