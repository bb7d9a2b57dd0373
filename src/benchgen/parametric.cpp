// tracefold bench --parametric (bench.hpp): model, then C, then the file.
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "parametric.hpp"

namespace tracefold::bench {

std::string generate_parametric_c(std::vector<TraceAtScale> traces, const Options& options) {
  std::vector<extrap::ExtrapInput> inputs;
  for (auto& t : traces) inputs.push_back({t.name, std::move(t.trace)});
  const benchgen::param::Model model = benchgen::param::build_model(inputs);
  return benchgen::param::emit_c(model, options);
}

void write_parametric_c(std::vector<TraceAtScale> traces, const Options& options,
                        const std::string& path) {
  const std::string text = generate_parametric_c(std::move(traces), options);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    f.close();
    if (!f) {
      std::filesystem::remove(tmp);
      throw BenchError("cannot write " + path);
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace tracefold::bench
