# Trace-to-trace passes for benchmark generation (bench_passes.hpp):
# wildcard resolution, collective alignment, the resolved view diff uses.
add_library(tracefold_benchgen_passes STATIC
  ${CMAKE_CURRENT_LIST_DIR}/passes_recorded.cpp
  ${CMAKE_CURRENT_LIST_DIR}/passes_wildcards.cpp
  ${CMAKE_CURRENT_LIST_DIR}/passes_align.cpp)
target_link_libraries(tracefold_benchgen_passes PUBLIC tracefold_core)

# coNCePTuaL output (bench_conceptual.hpp).
add_library(tracefold_benchgen_conceptual STATIC ${CMAKE_CURRENT_LIST_DIR}/conceptual.cpp)
target_link_libraries(tracefold_benchgen_conceptual PUBLIC tracefold_core)
