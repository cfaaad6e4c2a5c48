#include <k3lab/models/depth_mix.hpp>

#include <k3lab/models/compute_dtype.hpp>
#include <k3lab/models/rms_norm.hpp>

#include <torch/torch.h>

namespace k3lab::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The forward quantities, recomputed in backward rather than stored.
struct Mixed {
  torch::Tensor values;      // (N, B, T, D) in the compute dtype
  torch::Tensor inv_rms;     // (N, B, T, 1)
  torch::Tensor normalized;  // (N, B, T, D)  values * inv_rms
  torch::Tensor keys;        // (N, B, T, D)  normalized * gain
  torch::Tensor weights;     // (N, B, T)
};

// The same operations, in the same order, as depth_mix_reference: the outputs are bitwise equal.
Mixed mix_forward(torch::TensorList sources, const torch::Tensor& query, const torch::Tensor& gain, double eps) {
  Mixed m;
  m.values = torch::stack(sources, 0);
  m.values = m.values.to(compute_dtype(m.values));
  m.inv_rms = torch::rsqrt(m.values.pow(2).mean(-1, /*keepdim=*/true) + eps);
  m.normalized = m.values * m.inv_rms;
  m.keys = m.normalized * gain.to(m.values.scalar_type());
  m.weights = torch::softmax((m.keys * query.to(m.values.scalar_type())).sum(-1), 0);
  return m;
}

class DepthMixFunction : public torch::autograd::Function<DepthMixFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::TensorList sources, const torch::Tensor& query,
                               const torch::Tensor& gain, double eps) {
    const Mixed m = mix_forward(sources, query, gain, eps);
    variable_list saved(sources.begin(), sources.end());  // references, not copies
    saved.push_back(query);
    saved.push_back(gain);
    ctx->save_for_backward(saved);
    ctx->saved_data["eps"] = eps;
    return (m.weights.unsqueeze(-1) * m.values).sum(0).to(sources.front().scalar_type());  // (B, T, D)
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor gain = saved.back();
    saved.pop_back();
    const torch::Tensor query = saved.back();
    saved.pop_back();
    const Mixed m = mix_forward(saved, query, gain, ctx->saved_data["eps"].toDouble());
    const auto cdt = m.values.scalar_type();
    const auto grad = grad_outputs[0].to(cdt).unsqueeze(0);                        // (1, B, T, D)
    const auto along = (grad * m.values).sum(-1);                                  // (N, B, T)
    const auto d_logits = m.weights * (along - (m.weights * along).sum(0, true));  // (N, B, T)
    const auto d_keys = d_logits.unsqueeze(-1) * query.to(cdt);                   // (N, B, T, D)
    const auto d_query = (d_logits.unsqueeze(-1) * m.keys).sum({0, 1, 2});         // (D)
    const auto d_gain = (d_keys * m.normalized).sum({0, 1, 2});                    // (D)
    const auto d_normalized = d_keys * gain.to(cdt);                               // (N, B, T, D)
    // RMS normalisation's backward, plus the direct path out = sum_i w_i s_i.
    const auto d_values = m.inv_rms * (d_normalized - m.normalized * (d_normalized * m.normalized).mean(-1, true)) +
                          m.weights.unsqueeze(-1) * grad;                          // (N, B, T, D)
    variable_list grads;
    for (std::size_t i = 0; i < saved.size(); ++i) grads.push_back(d_values[static_cast<std::int64_t>(i)].to(saved[i].scalar_type()));
    grads.push_back(d_query.to(query.scalar_type()));
    grads.push_back(d_gain.to(gain.scalar_type()));
    grads.emplace_back();  // eps
    return grads;
  }
};

}  // namespace

torch::Tensor depth_mix(const std::vector<torch::Tensor>& sources, const torch::Tensor& query,
                        const torch::Tensor& gain, double eps) {
  return DepthMixFunction::apply(torch::TensorList(sources), query, gain, eps);
}

torch::Tensor depth_mix_reference(const std::vector<torch::Tensor>& sources, const torch::Tensor& query,
                                  const torch::Tensor& gain, double eps) {
  const auto values = torch::stack(sources, 0);                                    // (N, B, T, D)
  const auto cdt = compute_dtype(values);
  const auto keys = rms_normalize(values.to(cdt), eps) * gain.to(cdt);             // (N, B, T, D)
  const auto logits = (keys * query.to(cdt)).sum(-1);                              // (N, B, T)
  const auto weights = torch::softmax(logits, 0).unsqueeze(-1);                     // (N, B, T, 1)
  return (weights * values.to(cdt)).sum(0).to(values.scalar_type());               // (B, T, D)
}

}  // namespace k3lab::models
