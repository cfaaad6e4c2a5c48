// What the runner refuses before a run dir is made.
#include <gtest/gtest.h>

#include "k3lab/core/protocol.hpp"
#include "router_balance/parameters.hpp"
#include "router_balance/run_unit.hpp"

namespace k3lab::experiments::router_balance {
namespace {

Parameters smoke() {
  const auto protocol = core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/router-balance.json",
                                            &parameter_schema());
  return parse_parameters(protocol.parameters_for("smoke"));
}

TEST(RouterBalanceRunner, AcceptsTheFrozenProtocol) { EXPECT_FALSE(runner_problem(smoke()).has_value()); }

TEST(RouterBalanceRunner, RefusesWhatItDoesNotImplementNamingTheField) {
  auto p = smoke();
  p.quantile_estimator = "histogram";
  ASSERT_TRUE(runner_problem(p).has_value());
  EXPECT_NE(runner_problem(p)->find("quantile_balancing.estimator"), std::string::npos);
  p = smoke();
  p.model.router_activation = "softmax";
  ASSERT_TRUE(runner_problem(p).has_value());
  EXPECT_NE(runner_problem(p)->find("router_activation"), std::string::npos);
  p = smoke();
  p.final_loss_window_updates = p.measured_updates + 1;
  EXPECT_TRUE(runner_problem(p).has_value());
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
