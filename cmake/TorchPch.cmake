# One precompiled <torch/torch.h>, built once and reused by every target that includes LibTorch:
# torch/torch.h dominates compile time on a 2-core machine, and per-target copies rebuilt it 13 times.
# Targets that reuse it must compile with the same flags (k3lab_target_defaults gives them those);
# -Winvalid-pch makes a silently rejected header visible.
set(k3lab_torch_pch_source ${CMAKE_CURRENT_BINARY_DIR}/k3lab_torch_pch.cpp)
file(WRITE ${k3lab_torch_pch_source} "// The translation unit that owns the shared precompiled <torch/torch.h>.\n")
add_library(k3lab_torch_pch STATIC ${k3lab_torch_pch_source})
target_link_libraries(k3lab_torch_pch PRIVATE ${TORCH_LIBRARIES})
k3lab_target_defaults(k3lab_torch_pch)
target_precompile_headers(k3lab_torch_pch PRIVATE <torch/torch.h>)

# k3lab_use_torch_pch(<target>): compile <target> against the shared precompiled <torch/torch.h>.
function(k3lab_use_torch_pch target)
  target_precompile_headers(${target} REUSE_FROM k3lab_torch_pch)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Winvalid-pch>)
endfunction()
