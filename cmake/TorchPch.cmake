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

# The same header for test code, which compiles at -O1 unless K3LAB_OPTIMIZE_TESTS (cmake/Options.cmake),
# precompiled with the test code's flags: GCC accepts the libraries' -O3 header in a -O1 unit but then
# compiles LibTorch's inline code at -O3, and refuses it at -O0. Measured on one test translation unit
# (situ_qat_tests): -O3 with the shared header 28.9 s; -O1 with the shared header 25.3 s, with this
# one 20.4 s, without any 32.5 s.
if(K3LAB_BUILD_TESTS AND NOT K3LAB_OPTIMIZE_TESTS)
  set(k3lab_torch_test_pch_source ${CMAKE_CURRENT_BINARY_DIR}/k3lab_torch_test_pch.cpp)
  file(WRITE ${k3lab_torch_test_pch_source} "// The translation unit that owns the tests' precompiled <torch/torch.h>.\n")
  add_library(k3lab_torch_test_pch STATIC ${k3lab_torch_test_pch_source})
  target_link_libraries(k3lab_torch_test_pch PRIVATE ${TORCH_LIBRARIES})
  k3lab_test_target_defaults(k3lab_torch_test_pch)
  target_precompile_headers(k3lab_torch_test_pch PRIVATE <torch/torch.h>)
endif()

# k3lab_test_use_torch_pch(<target>): compile test code that includes LibTorch against the precompiled
# <torch/torch.h> made with the test code's flags.
function(k3lab_test_use_torch_pch target)
  if(K3LAB_OPTIMIZE_TESTS)
    k3lab_use_torch_pch(${target})
  else()
    target_precompile_headers(${target} REUSE_FROM k3lab_torch_test_pch)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Winvalid-pch>)
  endif()
endfunction()
