# The benchmark-generation passes (bench_passes.hpp: passes*.cpp) and the
# coNCePTuaL output (bench_conceptual.hpp: conceptual*.cpp) are compiled
# into tracefold_benchgen by its source glob; these names stand for them.
add_library(tracefold_benchgen_passes INTERFACE)
target_link_libraries(tracefold_benchgen_passes INTERFACE tracefold_benchgen)
add_library(tracefold_benchgen_conceptual INTERFACE)
target_link_libraries(tracefold_benchgen_conceptual INTERFACE tracefold_benchgen)
