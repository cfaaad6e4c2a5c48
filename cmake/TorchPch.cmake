# Precompiled <torch/torch.h>: torch/torch.h dominates compile time on a 2-core machine, and per-target
# copies rebuilt it 13 times. One header, built once and reused by every library and test that includes
# LibTorch. They all compile at K3LAB_TORCH_LEVEL (cmake/Options.cmake): GCC does not support a header
# built at another level (it refuses -O0 against -O1 and crashed on -O1 against -O2), and a -O3 header in
# a -O1 unit was slower (situ_qat_tests: -O3 with the shared header 28.9 s; -O1 with its own 20.4 s,
# without any 32.5 s). -Winvalid-pch makes a silently rejected header visible.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/k3lab_torch_pch.cpp
     "// The translation unit that owns the precompiled <torch/torch.h>.\n")
add_library(k3lab_torch_pch STATIC ${CMAKE_CURRENT_BINARY_DIR}/k3lab_torch_pch.cpp)
target_link_libraries(k3lab_torch_pch PRIVATE ${TORCH_LIBRARIES})
target_precompile_headers(k3lab_torch_pch PRIVATE <torch/torch.h>)
set_property(TARGET k3lab_torch_pch PROPERTY K3LAB_LEVEL "${K3LAB_TORCH_LEVEL}")
k3lab_target_defaults(k3lab_torch_pch)

# k3lab_use_torch_pch(<target>): compile <target> (a library or test code, with its k3lab_target_defaults
# or k3lab_test_target_defaults, in either order) against the shared precompiled <torch/torch.h>, at its
# level.
function(k3lab_use_torch_pch target)
  target_precompile_headers(${target} REUSE_FROM k3lab_torch_pch)
  set_property(TARGET ${target} PROPERTY K3LAB_LEVEL "${K3LAB_TORCH_LEVEL}")
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Winvalid-pch>)
endfunction()
