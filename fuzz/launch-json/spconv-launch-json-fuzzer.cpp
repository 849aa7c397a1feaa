//===- spconv-launch-json-fuzzer.cpp - the runtime's sidecar reader --------===//
//
// Input: a launch sidecar (docs/launch-abi.md) as spconv-bench and any runtime built on
// lib/Runtime read it: json::parse, then parseLaunchFile. Only the parsing is fuzzed (no
// GPU, no CUDA): lib/Runtime/Json.cpp (the Value tree over nlohmann-json's reader and
// writer) and LaunchConfig.cpp are compiled into the fuzzer. Errors are thrown as
// std::runtime_error and expected; crashes, sanitizer reports and other exception types
// (an nlohmann exception escaping included) are findings. A document that parses must
// also survive a round trip through the writer.
//
//===----------------------------------------------------------------------===//
#include "spconv/Runtime/Json.h"
#include "spconv/Runtime/LaunchConfig.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace spconv;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  json::Value doc;
  try {
    doc = json::parse(text);
  } catch (const std::runtime_error &) {
    return 0;
  }
  // What the writer makes of a parsed document, the reader must take back.
  std::string dumped = doc.dump(2), flat = doc.dump(-1);
  try {
    (void)json::parse(dumped);
    (void)json::parse(flat);
  } catch (const std::runtime_error &) {
    abort();
  }
  try {
    runtime::LaunchFile file = runtime::parseLaunchFile(doc);
    for (const runtime::KernelDesc &kernel : file.kernels) {
      (void)file.kernel(kernel.entry);
      (void)kernel.findParam("input");
      (void)kernel.findParam("output");
      for (const runtime::ParamDesc &param : kernel.params) {
        (void)param.numElements();
        (void)param.numBytes();
      }
      if (kernel.hasConv)
        (void)kernel.conv.weightCount();
    }
  } catch (const std::runtime_error &) {
  }
  return 0;
}
