# k3lab_add_experiment(<name> SOURCES <files...> [LIBS <libraries...>] [TORCH])
#
# One protocol module, src/experiments/<name>/ (docs/adding-an-experiment.md): a static library
# k3lab_exp_<name>. Its headers are private: the module and its tests include them as "<name>/x.hpp";
# nothing else may (tests/layers/layers_test.cpp enforces it). LIBS are the layers it uses
# (k3lab_training, k3lab_api, k3lab_sim, ...); TORCH compiles it against the shared precompiled
# <torch/torch.h>. The registry (src/experiments/registry/) links every module added here; nothing else
# links a module.
function(k3lab_add_experiment name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;LIBS" ${ARGN})
  set(target k3lab_exp_${name})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/experiments)
  target_link_libraries(${target} PUBLIC k3lab_experiments ${ARG_LIBS} nlohmann_json::nlohmann_json)
  k3lab_target_defaults(${target})
  if(ARG_TORCH)
    k3lab_use_torch_pch(${target})
  endif()
  set_property(GLOBAL APPEND PROPERTY K3LAB_EXPERIMENT_MODULES ${target})
endfunction()

# k3lab_add_experiment_tests(<name> [LABEL unit|smoke|slow] [TEST <binary name>] SOURCES <files...>
#                            [LIBS <libraries...>] [TORCH] [EXCLUDE ...])
# A module's tests (tests/<name>/): a gtest binary that may include the module's private headers.
function(k3lab_add_experiment_tests name)
  cmake_parse_arguments(ARG "TORCH" "LABEL;TEST;TIMEOUT" "SOURCES;LIBS;EXCLUDE" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_TEST)
    set(ARG_TEST ${name}_tests)
  endif()
  set(timeout_args)
  if(ARG_TIMEOUT)
    set(timeout_args TIMEOUT ${ARG_TIMEOUT})
  endif()
  set(exclude_args)
  if(ARG_EXCLUDE)
    set(exclude_args EXCLUDE ${ARG_EXCLUDE})
  endif()
  k3lab_add_gtest(${ARG_TEST} LABEL ${ARG_LABEL} SOURCES ${ARG_SOURCES} LIBS k3lab_exp_${name} ${ARG_LIBS}
                  ${timeout_args} ${exclude_args})
  target_include_directories(${ARG_TEST} PRIVATE ${PROJECT_SOURCE_DIR}/src/experiments)
  if(ARG_TORCH)
    k3lab_use_torch_pch(${ARG_TEST})
  endif()
endfunction()
