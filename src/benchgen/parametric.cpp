// tracefold bench --parametric (bench.hpp): model, then C, then the file.
#include "parametric.hpp"
#include "gen.hpp"

namespace tracefold::bench {

std::string generate_parametric_c(std::vector<TraceAtScale> traces, const Options& options) {
  std::vector<extrap::ExtrapInput> inputs;
  for (auto& t : traces) {
    try {
      check_single_thread(t.trace, options);
    } catch (const BenchError& e) {
      throw BenchError(t.name + ": " + e.what());
    }
    inputs.push_back({t.name, std::move(t.trace)});
  }
  const benchgen::param::Model model = benchgen::param::build_model(inputs);
  return benchgen::param::emit_c(model, options);
}

void write_parametric_c(std::vector<TraceAtScale> traces, const Options& options,
                        const std::string& path) {
  benchgen::write_whole(path, generate_parametric_c(std::move(traces), options));
}

}  // namespace tracefold::bench
