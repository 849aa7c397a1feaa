//===- spconv-launch-info.cpp - Read a launch sidecar as the runtime does -===//
//
// Loads a launch sidecar (docs/launch-abi.md) with lib/Runtime's reader, the one
// spconv-bench and any runtime built on lib/Runtime use, and prints what a launch of each
// kernel would use. It needs no GPU and no CUDA, so a sidecar can be checked where it is
// compiled; a malformed one is refused with the runtime's message (test/Runtime).
//
//===----------------------------------------------------------------------===//
#include "spconv/Runtime/LaunchConfig.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

using namespace spconv::runtime;

static std::string joined(const std::vector<int64_t> &values) {
  std::string out;
  for (int64_t v : values)
    out += (out.empty() ? "" : "x") + std::to_string(v);
  return out.empty() ? "scalar" : out;
}

int main(int argc, char **argv) {
  if (argc != 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fprintf(argc == 2 ? stdout : stderr,
                 "usage: spconv-launch-info SIDECAR.json\n\n"
                 "Reads a launch sidecar as the spconv runtime does (no GPU needed) and prints\n"
                 "each kernel's launch: grid, block, shared memory, parameters and conv.\n"
                 "Exit status: 0 the runtime can launch from it, 1 it cannot (the error is on\n"
                 "stderr), 2 bad usage.\n");
    return argc == 2 ? 0 : 2;
  }
  try {
    LaunchFile file = loadLaunchFile(argv[1]);
    if (file.kernels.empty())
      throw std::runtime_error("launch file lists no kernels");
    std::printf("%s: %zu kernel%s for %s\n", argv[1], file.kernels.size(),
                file.kernels.size() == 1 ? "" : "s",
                file.chip.empty() ? "an unnamed chip" : file.chip.c_str());
    for (const KernelDesc &k : file.kernels) {
      std::printf("%s: grid %u,%u,%u block %u,%u,%u, %u dynamic shared bytes\n",
                  k.entry.c_str(), k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1],
                  k.block[2], k.dynamicSharedBytes);
      for (const ParamDesc &p : k.params)
        std::printf("  param %s: %s %s %s%s, %lld elements\n", p.name.c_str(),
                    p.role.c_str(), p.dtype.c_str(), joined(p.shape).c_str(),
                    p.layout == "nchw" ? "" : (" as " + p.layout).c_str(),
                    static_cast<long long>(p.numElements()));
      if (k.pointerAlignment > 1)
        std::printf("  pointers %u-byte aligned\n", k.pointerAlignment);
      if (k.hasConv) {
        const ConvDesc &c = k.conv;
        std::printf("  conv N=%lld C=%lld H=%lld W=%lld K=%lld R=%lld S=%lld -> P=%lld "
                    "Q=%lld, groups %lld, %s%s, %lld weights\n",
                    (long long)c.N, (long long)c.C, (long long)c.H, (long long)c.W,
                    (long long)c.K, (long long)c.R, (long long)c.S, (long long)c.P,
                    (long long)c.Q, (long long)c.groups, c.activation.c_str(),
                    c.hasBias ? ", bias" : "", (long long)c.weightCount());
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "spconv-launch-info: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
