#pragma once
// The mock server's model for context-probe traffic: validate's deterministic reader answers the last
// user message from the prompt text alone (it never sees ground truth), with seeded recall loss that
// grows with the distance between evidence and question. With thinking on (K3 always reasons) the
// reply carries a short reasoning_content describing what the reader did, so that the reasoning
// hash-and-discard path of every record is exercised. The defaults are simulation parameters chosen
// to show degradation; they are not a claim about any real model.
#include "k3lab/api/mock_model.hpp"
#include "k3lab/validate/context_reader.hpp"

namespace k3lab::mock {

api::MockModel context_reader_model(validate::ReaderConfig config = {});

}  // namespace k3lab::mock
