//===- SpconvToAffine.cpp - spconv.conv2d to a gpu.func with affine nests -===//
//
// One thread block per (output tile, block of output channels, image or run of images). The
// block index along y selects the channel block and with it the code holding that block's
// weights: an scf.index_switch whose cases are uniform across the block, so no warp
// diverges and each case sees only its own weights (docs/design.md compares the
// alternatives). The FMAs of each staged chunk are an affine nest whose weights are
// functions of the induction variables; spconv-unroll-template (or convert-spconv-to-gpu
// directly) unrolls them.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/SpconvToAffine/SpconvToAffine.h"
#include "spconv/Conversion/ConvTemplate/ConvTemplate.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/Passes.h"
#include "spconv/Conversion/SpconvToGPU/SpconvToGPU.h"
#include "spconv/Conversion/TilingOptions.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

namespace spconv {
#define GEN_PASS_DEF_CONVERTSPCONVTOAFFINE
#include "spconv/Conversion/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

gpu::GPUModuleOp spconv::getOrCreateKernelModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  return gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
}

/// An empty side-effecting inline asm that reads every accumulator. LLVM may not move it, so
/// the FMAs of a staged chunk stay before the barrier that ends the chunk. Without it, LLVM
/// sinks every FMA into the guarded store blocks at the end of the kernel, keeping every
/// loaded input value alive across all chunks (thousands of registers, massive spills).
///
/// The asm text is a PTX comment naming the channel block and chunk. It must differ between
/// cases: MLIR's region simplification (run by convert-gpu-to-nvvm's greedy rewrites) merges
/// blocks that are identical up to their operands and turns the differing operands (our
/// weight placeholders) into block arguments, where spconv-fold-weights could not delete
/// zero products any more.
static void pinAccumulators(OpBuilder &b, Location loc, ArrayRef<Value> accs, int64_t kb,
                            int64_t chunk) {
  if (accs.empty())
    return;
  // An f32 sum in an f32 register ("f"); a half-precision word in a 32-bit one ("r"); a
  // pair of f32 sums (half precision with promoted runs) as its two f32.
  std::string constraints;
  SmallVector<Value> operands;
  Type i32 = b.getI32Type();
  for (Value acc : accs) {
    auto vec = llvm::dyn_cast<VectorType>(acc.getType());
    if (vec && vec.getElementType().isF32()) {
      for (int64_t e = 0; e < 2; ++e)
        operands.push_back(LLVM::ExtractElementOp::create(
            b, loc, acc, LLVM::ConstantOp::create(b, loc, i32, e)));
      constraints += constraints.empty() ? "f,f" : ",f,f";
      continue;
    }
    operands.push_back(acc);
    constraints += constraints.empty() ? "" : ",";
    constraints += vec ? "r" : "f";
  }
  std::string text =
      "// spconv channel block " + std::to_string(kb) + " chunk " + std::to_string(chunk);
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, operands, text, constraints,
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None,
                            /*asm_dialect=*/LLVM::AsmDialectAttr(),
                            /*operand_attrs=*/ArrayAttr());
}

/// Chunks [first, last) of channel block `kb` for the threads of one group: each staged by
/// the group into its tile (at `tileOffset`), then its FMAs. `barrier` synchronises the
/// group. Straight-line, or with Tiling::chunkLoop == 2 one scf.for over the group's full
/// chunks (ConvTemplateEmitter::chunkLoopEnd): its body stages chunk j from channel
/// j * chunkC (a run-time offset: one copy of the staging code) and switches on j to that
/// chunk's FMAs, the accumulators carried by the loop; a partial last chunk follows the loop
/// straight-line. Either way each chunk's FMAs exist once. Returns how many times a thread
/// runs `barrier` (a barrier in the loop body counts once per iteration).
static int64_t emitChunks(OpBuilder &b, Location loc, const ConvTemplateEmitter &emitter,
                          Value tid, const BlockCoords &bc, int64_t kb, int64_t first,
                          int64_t last, Value input, Value tile, Value kBase, int64_t tileOffset,
                          function_ref<void()> emitBarrier, SmallVectorImpl<Value> &accs) {
  int64_t executed = 0;
  auto barrier = [&](int64_t times = 1) {
    emitBarrier();
    executed += times;
  };
  if (emitter.getTiling().readsInputsDirectly()) {
    // Nothing staged, nothing to wait for: the chunks' FMAs read the input themselves.
    DirectInputs direct = emitter.emitDirectInputs(b, loc, tid, bc, kb, input, kBase);
    for (int64_t chunk = first; chunk < last; ++chunk) {
      emitter.emitChunkNest(b, loc, tid, kb, chunk, tile, accs, tileOffset, bc.tileBase,
                            &direct);
      pinAccumulators(b, loc, accs, kb, chunk);
    }
    return executed;
  }
  int64_t loopEnd = emitter.chunkLoopEnd(first, last);
  const KernelGeometry &g = emitter.geometry();
  if (loopEnd > first && g.stagingBuffers == 2) {
    // Double-buffered (cp.async staging): chunk j + 1's copies are issued into the other
    // buffer before chunk j's FMAs, so they are in flight while the FMAs run. Iteration j
    // waits for its own chunk and synchronises (which also tells every thread that chunk
    // j - 1's readers are done with the buffer chunk j + 1 goes to), issues chunk j + 1, and
    // runs chunk j's FMAs from buffer (j - first) mod 2 (constant in each case).
    auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
    int64_t chunkC = emitter.getTiling().chunkC;
    emitter.emitStage(b, loc, tid, bc, kb, cst(first * chunkC), chunkC, input, tile, kBase,
                      tileOffset, /*wait=*/false);
    auto loop = scf::ForOp::create(b, loc, cst(first), cst(loopEnd), cst(1), accs);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      emitter.emitStageWait(b, loc);
      barrier(loopEnd - first);
      emitter.emitStageIntoBuffer(b, loc, tid, bc, kb, arith::AddIOp::create(b, loc, j, cst(1)),
                                  first, loopEnd, input, tile, kBase, tileOffset);
      SmallVector<Value> nextAccs = emitter.emitChunkSwitch(
          b, loc, j, first, loopEnd, TypeRange(ValueRange(accs)), [&](int64_t chunk) {
            SmallVector<Value> chunkAccs(loop.getRegionIterArgs());
            emitter.emitChunkNest(b, loc, tid, kb, chunk, tile, chunkAccs,
                                  emitter.bufferedTileOffset(chunk, first, tileOffset),
                                  bc.tileBase);
            pinAccumulators(b, loc, chunkAccs, kb, chunk);
            return chunkAccs;
          });
      scf::YieldOp::create(b, loc, nextAccs);
    }
    accs.assign(loop.getResults().begin(), loop.getResults().end());
    // The last looped chunk's readers must be done before a partial chunk overwrites buffer 0.
    barrier();
  } else if (loopEnd > first) {
    auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
    auto loop = scf::ForOp::create(b, loc, cst(first), cst(loopEnd), cst(1), accs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    int64_t chunkC = emitter.getTiling().chunkC;
    Value c0 = arith::MulIOp::create(b, loc, j, cst(chunkC));
    emitter.emitStage(b, loc, tid, bc, kb, c0, chunkC, input, tile, kBase, tileOffset);
    barrier(loopEnd - first);
    SmallVector<Value> next = emitter.emitChunkSwitch(
        b, loc, j, first, loopEnd, TypeRange(ValueRange(accs)), [&](int64_t chunk) {
          SmallVector<Value> chunkAccs(loop.getRegionIterArgs());
          emitter.emitChunkNest(b, loc, tid, kb, chunk, tile, chunkAccs, tileOffset,
                                bc.tileBase);
          pinAccumulators(b, loc, chunkAccs, kb, chunk);
          return chunkAccs;
        });
    // The chunk's readers must be done before the next iteration (or the partial chunk
    // after the loop) overwrites the tile; after the last chunk this barrier is one more
    // than the straight-line form has.
    barrier(loopEnd - first);
    scf::YieldOp::create(b, loc, next);
    accs.assign(loop.getResults().begin(), loop.getResults().end());
  }
  SmallVector<Value> ahead;
  for (int64_t chunk = loopEnd; chunk < last; ++chunk) {
    // The previous straight-line chunk's readers must be done before the tile is
    // overwritten (the loop ends with that barrier).
    if (chunk > loopEnd)
      barrier();
    emitter.emitStage(b, loc, tid, bc, kb, chunk, input, tile, kBase, tileOffset, ahead);
    barrier();
    // Loads ahead (Tiling::loadAhead): the next chunk's first loads go out before this
    // chunk's FMAs, so that their latency runs under them; the words wait in registers
    // until the barrier above the next stage.
    ahead.clear();
    if (chunk + 1 < last)
      ahead = emitter.emitStageLoadsAhead(b, loc, tid, bc, kb, chunk + 1, input, kBase);
    emitter.emitChunkNest(b, loc, tid, kb, chunk, tile, accs, tileOffset, bc.tileBase);
    pinAccumulators(b, loc, accs, kb, chunk);
  }
  return executed;
}

/// The code of one channel block: accumulators, every staged chunk with its FMAs, stores.
/// With split chunks (Tiling::splitC > 1) each warp group runs its own chunks behind its own
/// named barrier (an scf.index_switch on the group: the groups' code is disjoint, so every
/// chunk's FMAs still exist once), then the groups' partial sums are added through shared
/// memory and the first group stores (docs/design.md, "Split chunks"). With a cluster split
/// (Tiling::clusterSplit > 1, `rank` the block's in its cluster) the switch is over every
/// group of the cluster, the block running those of its rank, and the partial sums meet in
/// the first block through distributed shared memory (docs/design.md, "Cluster split").
static void emitChannelBlock(OpBuilder &b, Location loc, const ConvTemplateEmitter &emitter,
                             Value tid, const BlockCoords &bc, int64_t kb, Value input,
                             Value output, Value tile, Value kBase, Value rank) {
  const KernelGeometry &g = emitter.geometry();
  if (g.numGroups() == 1) {
    SmallVector<Value> accs = emitter.emitInitialAccumulators(b, loc, kb);
    emitChunks(b, loc, emitter, tid, bc, kb, 0, g.numChunks, input, tile, kBase, 0,
               [&] { gpu::BarrierOp::create(b, loc); }, accs);
    emitter.emitStore(b, loc, tid, bc, kb, accs, output, kBase);
    return;
  }
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  int64_t threads = g.block[0] / g.splitC;
  // The group within the block, and within the cluster.
  Value localGroup = arith::DivUIOp::create(b, loc, tid, cst(threads));
  Value group = rank ? arith::AddIOp::create(
                           b, loc, arith::MulIOp::create(b, loc, rank, cst(g.splitC)), localGroup)
                           .getResult()
                     : localGroup;
  Value groupTid = arith::RemUIOp::create(b, loc, tid, cst(threads));
  int64_t numAccs = emitter.numAccumulators(kb);
  SmallVector<Type> accTypes(numAccs, emitter.accumulatorType(b));
  SmallVector<int64_t> cases;
  for (int64_t grp = 1; grp < g.numGroups(); ++grp)
    cases.push_back(grp);
  // Group 0 is the default case.
  auto sw = scf::IndexSwitchOp::create(b, loc, accTypes, group, cases, cases.size());
  // How many times each group's threads pass its named barrier, and its yield.
  SmallVector<int64_t> groupBarriers(g.numGroups(), 0);
  SmallVector<Operation *> groupYields(g.numGroups(), nullptr);
  auto groupBarrier = [&](OpBuilder &ob, int64_t grp) {
    // Barrier 0 is the whole block's; group grp uses barrier grp + 1 (of its block: grp mod
    // splitC + 1), counting its threads.
    Value id = arith::ConstantIntOp::create(ob, loc, ob.getI32Type(), grp % g.splitC + 1);
    Value count = arith::ConstantIntOp::create(ob, loc, ob.getI32Type(), threads);
    NVVM::BarrierOp::create(ob, loc, Type(), id, count, NVVM::BarrierReductionAttr(), Value());
  };
  for (int64_t grp = 0; grp < g.numGroups(); ++grp) {
    OpBuilder::InsertionGuard guard(b);
    Region &region = grp == 0 ? sw.getDefaultRegion() : sw.getCaseRegions()[grp - 1];
    b.setInsertionPointToStart(&region.emplaceBlock());
    SmallVector<Value> accs = grp == 0 ? emitter.emitInitialAccumulators(b, loc, kb)
                                       : emitter.emitZeroAccumulators(b, loc, kb);
    auto [first, last] = g.groupChunks(grp);
    groupBarriers[grp] = emitChunks(
        b, loc, emitter, groupTid, bc, kb, first, last, input, tile, kBase,
        grp % g.splitC * g.sharedFloats, [&] { groupBarrier(b, grp); }, accs);
    groupYields[grp] = scf::YieldOp::create(b, loc, accs);
  }
  // Every group passes its named barrier equally often: a group with fewer chunks (or fewer
  // loop iterations) passes its own barrier the missing number of times before it yields.
  // Only the group's own warps wait there, so this costs a few cycles. It is for
  // compute-sanitizer's racecheck, which orders two threads' shared accesses across barriers
  // as if by how many barriers each thread has passed, whatever their ids: when the groups
  // pass theirs unequally often, the partial sums written below by groups >= 1 and read by
  // group 0 are reported as RAW (or, the other way round, WAR) hazards, although bar.sync 0
  // separates them in the SASS (docs/reliability.md, "GPU code";
  // bench/sanitize/split_reduce_repro.cu).
  int64_t most = *llvm::max_element(groupBarriers);
  for (int64_t grp = 0; grp < g.numGroups(); ++grp) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(groupYields[grp]);
    for (int64_t i = groupBarriers[grp]; i < most; ++i)
      groupBarrier(b, grp);
  }
  SmallVector<Value> accs(sw.getResults());
  // Every group is done with its tile: the partial sums may overwrite them.
  gpu::BarrierOp::create(b, loc);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group, cst(0));
  // Every group but the first writes its sums into its block's tile: group g at slot g - 1,
  // or under a cluster split local group l at slot l (its block's first group writes too).
  // Then a barrier: the block's, or the cluster's (release, then acquire), which makes the
  // other blocks' sums visible to the first block. The first group adds them in group order
  // and stores; under a cluster split a second cluster barrier keeps every block, and its
  // shared memory, alive until then.
  auto clusterBarrier = [&] {
    NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/b.getUnitAttr());
  };
  {
    auto write = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(write.elseBlock());
    Value slotGroup = rank ? arith::AddIOp::create(b, loc, localGroup, cst(1)).getResult() : group;
    emitter.emitWritePartials(b, loc, slotGroup, groupTid, accs, tile);
  }
  if (rank)
    clusterBarrier();
  else
    gpu::BarrierOp::create(b, loc);
  {
    auto store = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(store.thenBlock());
    if (rank)
      emitter.emitAddClusterPartials(b, loc, groupTid, accs, tile);
    else
      emitter.emitAddPartials(b, loc, groupTid, accs, tile);
    emitter.emitStore(b, loc, groupTid, bc, kb, accs, output, kBase);
  }
  if (rank)
    clusterBarrier();
}

gpu::GPUFuncOp spconv::emitAffineGPUKernel(const ConvShape &shape, const Tiling &tiling,
                                     gpu::GPUModuleOp gpuModule, StringRef name, Location loc,
                                     KernelForm form) {
  MLIRContext *ctx = gpuModule.getContext();
  // Split chunks synchronise their warp groups with nvvm.barrier (named barriers); callers
  // outside a pass (the template cache's scratch module) may not have loaded NVVM yet.
  ctx->getOrLoadDialect<NVVM::NVVMDialect>();
  ctx->getOrLoadDialect<nvgpu::NVGPUDialect>();
  ConvTemplateEmitter emitter(shape, tiling);
  emitter.setAsyncStaging(tiling.asyncStaging != 1);
  emitter.setGpuJoins(true);
  const KernelGeometry &g = emitter.geometry();
  OpBuilder types(ctx);
  // The tensors as the conv sees them (half precision: not the word shape, but for adjacent
  // pairs: emitter.tensorTypes); the tile in words.
  auto [inType, outType] = emitter.tensorTypes(types);
  auto tileType =
      MemRefType::get({g.blockSharedFloats}, emitter.laneType(types), MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(ctx, gpu::GPUDialect::getWorkgroupAddressSpace()));

  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  // (input, [residual,] output): the residual has the output's type (ConvShape::residual).
  SmallVector<Type, 3> params{inType};
  if (shape.residual)
    params.push_back(outType);
  params.push_back(outType);
  // Dynamic shared memory (Tiling::dynamicShared) is no attribution: the tile is a view of
  // it, made at the top of the body.
  bool dynamicShared = tiling.usesDynamicShared();
  auto func = gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(params, {}),
                                     dynamicShared ? TypeRange{} : TypeRange{tileType},
                                     TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // The tile is read with 8- and 16-byte shared loads (adjacent columns, channel vectors):
  // align it so wherever it is placed (docs/design.md, "Channel vectors"). Dynamic shared
  // memory is 16-byte aligned as convert-gpu-to-nvvm declares it.
  if (!dynamicShared)
    func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(16));
  func->setAttr(form == KernelForm::OneChannelBlock ? kBlockTemplateAttr : kTemplateAttr,
                b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(g.block[0]), int32_t(g.block[1]), int32_t(g.block[2])}));
  func.setKnownGridSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(g.grid[0]), int32_t(g.grid[1]), int32_t(g.grid[2])}));

  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value input = entry.getArgument(0), output = entry.getArgument(params.size() - 1);
  if (shape.residual)
    emitter.setResidual(entry.getArgument(1));
  Value tile;
  if (dynamicShared) {
    auto bytes = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface{}, tileType.getMemorySpace());
    Value base = gpu::DynamicSharedMemoryOp::create(b, loc, bytes);
    Value start = arith::ConstantIndexOp::create(b, loc, 0);
    tile = memref::ViewOp::create(b, loc, tileType, base, start, ValueRange{});
  } else {
    tile = func.getWorkgroupAttributions().front();
  }
  Value blockTid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value tileIdx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  // Cluster split: a tile's blocks are clusterSplit neighbours along x, one cluster (its
  // shape on the entry, `.reqnctapercluster`); block x is rank x mod clusterSplit of tile x
  // / clusterSplit.
  Value rank;
  if (g.clusterSplit > 1) {
    Value split = arith::ConstantIndexOp::create(b, loc, g.clusterSplit);
    rank = arith::RemUIOp::create(b, loc, tileIdx, split);
    tileIdx = arith::DivUIOp::create(b, loc, tileIdx, split);
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr({int32_t(g.clusterSplit), 1, 1}));
  }
  // Tiling::blockOrder: the grid is (tiles, channel blocks, image groups) or (tiles, image
  // groups, channel blocks).
  bool major = tiling.channelBlockMajor();
  Value kBlock =
      gpu::BlockIdOp::create(b, loc, major ? gpu::Dimension::z : gpu::Dimension::y);
  Value n = gpu::BlockIdOp::create(b, loc, major ? gpu::Dimension::y : gpu::Dimension::z);
  // With images per block each image's threads are a block of their own from here on, but
  // for the barriers they share (gpu.barrier: the images run the same code in lock-step).
  Value tid;
  BlockCoords bc;
  std::tie(tid, bc) =
      emitter.emitImageCoords(b, loc, blockTid, emitter.emitBlockCoords(b, loc, tileIdx, n));

  if (form == KernelForm::OneChannelBlock) {
    // Block 0's code, storing to the channels of whichever block runs it.
    Value kBase = arith::MulIOp::create(b, loc, kBlock,
                                        arith::ConstantIndexOp::create(b, loc, tiling.blockK));
    emitChannelBlock(b, loc, emitter, tid, bc, /*kb=*/0, input, output, tile, kBase, rank);
    gpu::ReturnOp::create(b, loc);
    return func;
  }

  SmallVector<int64_t> cases;
  for (int64_t kb = 0; kb < g.kBlocks; ++kb)
    cases.push_back(kb);
  auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{}, kBlock, cases, cases.size());
  gpu::ReturnOp::create(b, loc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&sw.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(b, loc);
  }
  for (int64_t kb = 0; kb < g.kBlocks; ++kb) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&sw.getCaseRegions()[kb].emplaceBlock());
    emitChannelBlock(b, loc, emitter, tid, bc, kb, input, output, tile, /*kBase=*/nullptr, rank);
    scf::YieldOp::create(b, loc);
  }
  return func;
}

LogicalResult spconv::lowerConvsToGPU(ModuleOp module, const Tiling &requested,
                                      const TargetGPU &gpu, bool unroll) {
  SmallVector<Conv2DOp> convs = collectUncompiledConvs(module);
  if (convs.empty())
    return success();
  gpu::GPUModuleOp gpuModule = getOrCreateKernelModule(module);
  SymbolTable symbols(gpuModule);
  int64_t nextIndex = 0;
  for (Conv2DOp op : convs) {
    if (failed(checkLowerable(op)))
      return failure();
    ConvShape shape = ConvShape::fromOp(op);
    Tiling tiling = chooseTiling(shape, requested, gpu);
    for (const std::string &why : unhonouredTilingRequests(shape, requested, tiling))
      emitWarning(op.getLoc(), why);
    std::string name = nextKernelName(symbols, nextIndex);
    gpu::GPUFuncOp func = unroll ? emitGPUKernel(shape, tiling, gpuModule, name, op.getLoc())
                                 : emitAffineGPUKernel(shape, tiling, gpuModule, name, op.getLoc());
    if (!func)
      return failure();
    symbols.insert(func);
    MLIRContext *ctx = module.getContext();
    op->setAttr(kKernelAttr, SymbolRefAttr::get(gpuModule.getSymNameAttr(),
                                                {FlatSymbolRefAttr::get(ctx, name)}));
    op->setAttr(kLaunchAttr, makeLaunchAttr(ctx, shape, tiling));
    addWeightsEntry(gpuModule, name, op);
  }
  return success();
}

namespace {
struct ConvertSpconvToAffinePass
    : public TilingOptionsPass<spconv::impl::ConvertSpconvToAffineBase<ConvertSpconvToAffinePass>> {
  using TilingOptionsPass::TilingOptionsPass;

  void runOnOperation() override {
    runWithRequestedTiling([&](const Tiling &requested, TargetGPU gpu) {
      return lowerConvsToGPU(getOperation(), requested, gpu, /*unroll=*/false);
    });
  }
};
} // namespace
