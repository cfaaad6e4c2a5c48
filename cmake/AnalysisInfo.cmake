# The analysis (the code that turns ledgers into tables, intervals and decisions) is versioned: a
# version bumped by hand when what a page concludes changes meaning, and the sha256 of its sources,
# recomputed at build time whenever one of them changes. Pages state both; freeze records keep them.
# Analysis sources: src/report and include/k3lab/report, the report builder and run history of the
# spine, the training layer's results code, and each module's page, summary, decision and metric files
# (naming convention: docs/verdicts.md, "Analysis version").
set(K3LAB_ANALYSIS_VERSION "2")
file(GLOB_RECURSE k3lab_analysis_candidates CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}
     ${CMAKE_SOURCE_DIR}/src/report/*.cpp ${CMAKE_SOURCE_DIR}/src/report/*.hpp
     ${CMAKE_SOURCE_DIR}/include/k3lab/report/*.hpp ${CMAKE_SOURCE_DIR}/src/experiments/*.cpp)
set(K3LAB_ANALYSIS_SOURCES "")
foreach(file IN LISTS k3lab_analysis_candidates)
  if(file MATCHES "^(src/report/|include/k3lab/report/)"
     OR file MATCHES "^src/experiments/(report_builder|run_history|run_publication|hardware_check)\\.cpp$"
     OR file MATCHES "^src/experiments/training/(arm_runs|downstream_page|failure_rule|gate|page_tables|records_by_group|results_frame)\\.cpp$"
     OR file MATCHES "^src/experiments/[a-z_]+/(page|summary|decision|run_digest|run_metrics|run_results|pass_hat_k|unit_metrics|[a-z_]*statistics|[a-z_]*stats|[a-z_]*_section|selection)\\.cpp$")
    list(APPEND K3LAB_ANALYSIS_SOURCES ${file})
  endif()
endforeach()
list(SORT K3LAB_ANALYSIS_SOURCES)
set(k3lab_analysis_list ${CMAKE_BINARY_DIR}/generated/analysis_sources.txt)
file(WRITE ${k3lab_analysis_list}.new "${K3LAB_ANALYSIS_SOURCES}")
configure_file(${k3lab_analysis_list}.new ${k3lab_analysis_list} COPYONLY)
list(TRANSFORM K3LAB_ANALYSIS_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/ OUTPUT_VARIABLE k3lab_analysis_paths)
set(K3LAB_ANALYSIS_HEADER ${CMAKE_BINARY_DIR}/generated/k3lab/analysis_info.hpp)
add_custom_command(
  OUTPUT ${K3LAB_ANALYSIS_HEADER}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DLIST=${k3lab_analysis_list}
          -DVERSION=${K3LAB_ANALYSIS_VERSION} -DOUT=${K3LAB_ANALYSIS_HEADER}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteAnalysisInfo.cmake
  DEPENDS ${k3lab_analysis_paths} ${k3lab_analysis_list} ${CMAKE_SOURCE_DIR}/cmake/WriteAnalysisInfo.cmake
  COMMENT "Hashing the analysis sources")
add_custom_target(k3lab_analysis_info DEPENDS ${K3LAB_ANALYSIS_HEADER})
