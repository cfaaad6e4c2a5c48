set(K3LAB_CUDA "AUTO" CACHE STRING "Build the CUDA kernels: AUTO (when nvcc is found), ON (required) or OFF")
set_property(CACHE K3LAB_CUDA PROPERTY STRINGS AUTO ON OFF)
option(K3LAB_BUILD_TESTS "Build the GoogleTest suites" ON)
option(K3LAB_SLOW_TESTS "Also register tests labelled slow (not in CI)" OFF)
option(K3LAB_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)
set(K3LAB_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address,undefined (empty: none)")
# For machines without CLI11/nlohmann/spdlog/fmt packages (the GPU machine): a folder holding
# copies of those headers, used header-only. See scripts/gpu-check.sh.
set(K3LAB_HEADER_DEPS_DIR "" CACHE PATH "Folder with CLI/, nlohmann/, spdlog/, fmt/ headers (empty: use installed packages)")

function(k3lab_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  if(K3LAB_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  if(K3LAB_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${K3LAB_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${K3LAB_SANITIZE})
  endif()
endfunction()
