//===- KernelInfo.cpp - attributes linking convs, kernels and weights -----===//
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace spconv;

DictionaryAttr spconv::makeLaunchAttr(MLIRContext *ctx, const ConvShape &shape,
                                      const Tiling &tiling, int64_t minBlocksPerSM,
                                      bool smAffine) {
  Builder b(ctx);
  KernelGeometry g(shape, tiling);
  SmallVector<NamedAttribute> tilingEntries{
      b.getNamedAttr("block_k", b.getI64IntegerAttr(tiling.blockK)),
      b.getNamedAttr("outputs_per_thread", b.getI64IntegerAttr(tiling.outputsPerThread)),
      b.getNamedAttr("tile_p", b.getI64IntegerAttr(tiling.tileP)),
      b.getNamedAttr("threads_q", b.getI64IntegerAttr(tiling.threadsQ)),
      b.getNamedAttr("chunk_c", b.getI64IntegerAttr(tiling.chunkC)),
      b.getNamedAttr("split_c", b.getI64IntegerAttr(g.splitC)),
      b.getNamedAttr("chunk_loop", b.getI64IntegerAttr(tiling.chunkLoop)),
      b.getNamedAttr("images_per_block", b.getI64IntegerAttr(g.imagesPerBlock)),
      b.getNamedAttr("block_order", b.getI64IntegerAttr(std::max<int64_t>(1, tiling.blockOrder))),
      b.getNamedAttr("async_staging", b.getI64IntegerAttr(tiling.asyncStaging == 1 ? 1 : 2)),
      b.getNamedAttr("column_order", b.getI64IntegerAttr(tiling.adjacentColumns() ? 2 : 1)),
      b.getNamedAttr("direct_inputs", b.getI64IntegerAttr(tiling.readsInputsDirectly() ? 2 : 1)),
      b.getNamedAttr("channel_vector",
                     b.getI64IntegerAttr(std::max<int64_t>(1, tiling.channelVector))),
      b.getNamedAttr("load_ahead", b.getI64IntegerAttr(tiling.loadAhead)),
      b.getNamedAttr("dynamic_shared", b.getI64IntegerAttr(tiling.usesDynamicShared() ? 2 : 1)),
  };
  // Only where there is one: launch attributes without it read as they did before.
  if (g.clusterSplit > 1)
    tilingEntries.push_back(b.getNamedAttr("cluster_split", b.getI64IntegerAttr(g.clusterSplit)));
  auto tilingAttr = b.getDictionaryAttr(tilingEntries);
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("grid", b.getDenseI64ArrayAttr({g.grid[0], g.grid[1], g.grid[2]})),
      b.getNamedAttr("block", b.getDenseI64ArrayAttr({g.block[0], g.block[1], g.block[2]})),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(g.blockSharedFloats * 4)),
      b.getNamedAttr("tiling", tilingAttr),
  };
  if (minBlocksPerSM > 0)
    entries.push_back(
        b.getNamedAttr("min_blocks_per_sm", b.getI64IntegerAttr(minBlocksPerSM)));
  if (smAffine)
    entries.push_back(b.getNamedAttr("sm_affine", b.getUnitAttr()));
  return b.getDictionaryAttr(entries);
}

Tiling spconv::tilingFromLaunchAttr(DictionaryAttr launch) {
  Tiling t;
  auto d = launch.getAs<DictionaryAttr>("tiling");
  if (!d)
    return t;
  auto get = [&](StringRef name) {
    auto a = d.getAs<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  t.blockK = get("block_k");
  t.outputsPerThread = get("outputs_per_thread");
  t.tileP = get("tile_p");
  t.threadsQ = get("threads_q");
  t.chunkC = get("chunk_c");
  t.splitC = get("split_c");
  t.chunkLoop = get("chunk_loop");
  t.imagesPerBlock = get("images_per_block");
  t.blockOrder = get("block_order");
  t.asyncStaging = get("async_staging");
  t.columnOrder = get("column_order");
  t.directInputs = get("direct_inputs");
  t.channelVector = get("channel_vector");
  t.loadAhead = get("load_ahead");
  t.dynamicShared = get("dynamic_shared");
  t.clusterSplit = get("cluster_split");
  return t;
}

void spconv::addWeightsEntry(Operation *symbolTable, StringRef kernel, Conv2DOp op) {
  Builder b(op.getContext());
  SmallVector<NamedAttribute> entry{b.getNamedAttr("weights", op.getWeights())};
  if (auto bias = op.getBiasAttr())
    entry.push_back(b.getNamedAttr("bias", bias));
  NamedAttrList all;
  if (auto old = symbolTable->getAttrOfType<DictionaryAttr>(kWeightsAttr))
    all.append(old.getValue());
  all.set(kernel, b.getDictionaryAttr(entry));
  symbolTable->setAttr(kWeightsAttr, all.getDictionary(op.getContext()));
}

SmallVector<Conv2DOp> spconv::collectUncompiledConvs(Operation *root) {
  SmallVector<Conv2DOp> convs;
  root->walk([&](Conv2DOp op) {
    if (!op->hasAttr(kKernelAttr))
      convs.push_back(op);
  });
  return convs;
}

std::string spconv::nextKernelName(SymbolTable &symbols, int64_t &next) {
  std::string name;
  do
    name = "spconv_conv2d_" + std::to_string(next++);
  while (symbols.lookup(name));
  return name;
}
