//===- SpconvToCPU.cpp - spconv.conv2d to a serial host template ----------===//
//
// The GPU template's twin for machines without a GPU: the same staged tile, the same
// unrolled FMAs with the same placeholders (the same affine nests, unrolled by
// unrollTemplateNests), the same guarded stores. Blocks become loops; a
// block's threads run each barrier-separated phase in turn, so accumulators that live in
// registers across barriers on the GPU live in a per-block buffer here.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/SpconvToCPU/SpconvToCPU.h"
#include "spconv/Conversion/ConvTemplate/ConvTemplate.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/UnrollNests.h"
#include "spconv/Conversion/Passes.h"
#include "spconv/Conversion/TilingOptions.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

namespace spconv {
#define GEN_PASS_DEF_CONVERTSPCONVTOCPU
#include "spconv/Conversion/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

static Value cst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Runs `body(tid)` for every thread of a block: one barrier-separated phase.
static void forEachThread(OpBuilder &b, Location loc, int64_t threads,
                          function_ref<void(OpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, loc, cst(b, loc, 0), cst(b, loc, threads), cst(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

/// A cluster split's groups, all in one block: the GPU's blocks of a cluster run the same
/// chunks in the same groups, and their first group adds the others' sums in group order, as
/// a split of that many groups does (ConvTemplateEmitter::emitAddClusterPartials).
static Tiling groupsInOneBlock(Tiling t) {
  if (t.clusterSplit > 1) {
    t.splitC = std::max<int64_t>(1, t.splitC) * t.clusterSplit;
    t.clusterSplit = 1;
  }
  return t;
}

func::FuncOp spconv::emitCPUKernel(const ConvShape &shape, const Tiling &clusterTiling,
                                   ModuleOp module, StringRef name, Location loc, bool unroll) {
  MLIRContext *ctx = module.getContext();
  const Tiling tiling = groupsInOneBlock(clusterTiling);
  ConvTemplateEmitter emitter(shape, tiling);
  const KernelGeometry &g = emitter.geometry();
  OpBuilder types(ctx);
  // The tensors as the conv sees them (half precision: not the word shape, but for adjacent
  // pairs: emitter.tensorTypes, the same bytes; the kernel's static strides ignore the
  // caller's descriptor sizes); the tile, the accumulators and the partial sums in lanes.
  Type lane = emitter.laneType(types);
  auto [inType, outType] = emitter.tensorTypes(types);
  int64_t maxAccs = tiling.blockK * tiling.outputsPerThread;

  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  // (input, [residual,] output), as the GPU kernel (SpconvToAffine.cpp).
  SmallVector<Type, 3> params{inType};
  if (shape.residual)
    params.push_back(outType);
  params.push_back(outType);
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(params, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  func->setAttr(kTemplateAttr, b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value input = entry->getArgument(0), output = entry->getArgument(params.size() - 1);
  if (shape.residual)
    emitter.setResidual(entry->getArgument(1));
  Value tile = memref::AllocaOp::create(b, loc, MemRefType::get({g.blockSharedFloats}, lane));
  int64_t threads = tiling.threads(); // of one group
  // Images per block: a phase runs the threads of every image's group (emitImageCoords).
  int64_t groupThreads = threads * g.imagesPerBlock;
  Value accBuf = memref::AllocaOp::create(
      b, loc, MemRefType::get({groupThreads * g.splitC, maxAccs}, emitter.accumulatorType(types)));

  for (int64_t kb = 0; kb < g.kBlocks; ++kb) {
    auto nLoop = scf::ForOp::create(b, loc, cst(b, loc, 0), cst(b, loc, g.imageGroups), cst(b, loc, 1));
    OpBuilder::InsertionGuard nGuard(b);
    b.setInsertionPointToStart(nLoop.getBody());
    auto tLoop = scf::ForOp::create(b, loc, cst(b, loc, 0), cst(b, loc, g.grid[0]), cst(b, loc, 1));
    b.setInsertionPointToStart(tLoop.getBody());
    BlockCoords bc =
        emitter.emitBlockCoords(b, loc, tLoop.getInductionVar(), nLoop.getInductionVar());
    int64_t numAccs = emitter.numAccumulators(kb);
    // Thread `blockTid` of group `grp` keeps its accumulators in row grp * threads +
    // blockTid (with images per block there is one group).
    auto row = [&](OpBuilder &tb, Value blockTid, int64_t grp) -> Value {
      return grp ? arith::AddIOp::create(tb, loc, blockTid, cst(tb, loc, grp * threads))
                       .getResult()
                 : blockTid;
    };
    // One barrier-separated phase: body(builder, thread index in its image's group, that
    // thread's coordinates, the block's thread index).
    auto phase = [&](function_ref<void(OpBuilder &, Value, const BlockCoords &, Value)> body) {
      forEachThread(b, loc, groupThreads, [&](OpBuilder &tb, Value blockTid) {
        std::pair<Value, BlockCoords> coords = emitter.emitImageCoords(tb, loc, blockTid, bc);
        body(tb, coords.first, coords.second, blockTid);
      });
    };
    auto saveAccs = [&](OpBuilder &tb, Value r, ArrayRef<Value> accs) {
      for (int64_t a = 0; a < numAccs; ++a)
        memref::StoreOp::create(tb, loc, accs[a], accBuf, ValueRange{r, cst(tb, loc, a)});
    };
    auto loadAccs = [&](OpBuilder &tb, Value r) {
      SmallVector<Value> accs;
      for (int64_t a = 0; a < numAccs; ++a)
        accs.push_back(memref::LoadOp::create(tb, loc, accBuf, ValueRange{r, cst(tb, loc, a)}));
      return accs;
    };
    // Split chunks (Tiling::splitC): the groups run one after the other here, each on its
    // own tile, exactly the work the GPU's groups do side by side.
    for (int64_t grp = 0; grp < g.splitC; ++grp) {
      phase([&](OpBuilder &tb, Value, const BlockCoords &, Value blockTid) {
        saveAccs(tb, row(tb, blockTid, grp),
                 grp == 0 ? emitter.emitInitialAccumulators(tb, loc, kb)
                          : emitter.emitZeroAccumulators(tb, loc, kb));
      });
      int64_t offset = grp * g.sharedFloats;
      // Plain variables, not a structured binding: the chunk loop's lambdas capture them.
      int64_t first, last;
      std::tie(first, last) = g.groupChunks(grp);
      int64_t loopEnd = emitter.chunkLoopEnd(first, last);
      // A double-buffered loop (KernelGeometry::stagingBuffers 2) stages chunk j + 1 into
      // the other buffer before chunk j's FMAs, which read buffer (j - first) mod 2: here
      // in that order, one phase after the other, so the buffers' offsets are checked.
      bool twoBuffers = loopEnd > first && g.stagingBuffers == 2;
      auto bufferOf = [&](int64_t chunk) {
        return twoBuffers ? emitter.bufferedTileOffset(chunk, first, offset) : offset;
      };
      if (twoBuffers)
        phase([&](OpBuilder &tb, Value tid, const BlockCoords &tbc, Value) {
          emitter.emitStage(tb, loc, tid, tbc, kb, first, input, tile, nullptr, offset);
        });
      if (loopEnd > first) {
        // The GPU template's chunk loop (SpconvToAffine.cpp, emitChunks): full chunk j staged
        // from the run-time channel j * chunkC, its FMAs chosen by a switch on j.
        auto jLoop = scf::ForOp::create(b, loc, cst(b, loc, first), cst(b, loc, loopEnd),
                                        cst(b, loc, 1));
        OpBuilder::InsertionGuard jGuard(b);
        b.setInsertionPointToStart(jLoop.getBody());
        Value j = jLoop.getInductionVar();
        phase([&](OpBuilder &tb, Value tid, const BlockCoords &tbc, Value) {
          if (twoBuffers)
            emitter.emitStageIntoBuffer(tb, loc, tid, tbc, kb,
                                        arith::AddIOp::create(tb, loc, j, cst(tb, loc, 1)),
                                        first, loopEnd, input, tile, nullptr, offset);
          else
            emitter.emitStage(tb, loc, tid, tbc, kb,
                              arith::MulIOp::create(tb, loc, j, cst(tb, loc, tiling.chunkC)),
                              tiling.chunkC, input, tile, nullptr, offset);
        });
        phase([&](OpBuilder &tb, Value tid, const BlockCoords &tbc, Value blockTid) {
          emitter.emitChunkSwitch(tb, loc, j, first, loopEnd, TypeRange{}, [&](int64_t chunk) {
            SmallVector<Value> accs = loadAccs(tb, row(tb, blockTid, grp));
            emitter.emitChunkNest(tb, loc, tid, kb, chunk, tile, accs, bufferOf(chunk),
                                  tbc.tileBase);
            saveAccs(tb, row(tb, blockTid, grp), accs);
            return SmallVector<Value>{};
          });
        });
      }
      // Straight-line chunks, and a partial last chunk after the loop.
      for (int64_t chunk = loopEnd; chunk < last; ++chunk) {
        phase([&](OpBuilder &tb, Value tid, const BlockCoords &tbc, Value) {
          emitter.emitStage(tb, loc, tid, tbc, kb, chunk, input, tile, nullptr, offset);
        });
        phase([&](OpBuilder &tb, Value tid, const BlockCoords &tbc, Value blockTid) {
          SmallVector<Value> accs = loadAccs(tb, row(tb, blockTid, grp));
          // Direct inputs (the staging phase above stages nothing): read from the input.
          std::optional<DirectInputs> direct;
          if (tiling.readsInputsDirectly())
            direct = emitter.emitDirectInputs(tb, loc, tid, tbc, kb, input);
          emitter.emitChunkNest(tb, loc, tid, kb, chunk, tile, accs, offset, tbc.tileBase,
                                direct ? &*direct : nullptr);
          saveAccs(tb, row(tb, blockTid, grp), accs);
        });
      }
    }
    for (int64_t grp = 1; grp < g.splitC; ++grp)
      forEachThread(b, loc, threads, [&](OpBuilder &tb, Value tid) {
        emitter.emitWritePartials(tb, loc, cst(tb, loc, grp), tid,
                                  loadAccs(tb, row(tb, tid, grp)), tile);
      });
    phase([&](OpBuilder &tb, Value tid, const BlockCoords &tbc, Value blockTid) {
      SmallVector<Value> accs = loadAccs(tb, blockTid);
      if (g.splitC > 1)
        emitter.emitAddPartials(tb, loc, tid, accs, tile);
      emitter.emitStore(tb, loc, tid, tbc, kb, accs, output);
    });
  }
  func::ReturnOp::create(b, loc);
  if (unroll && failed(unrollTemplateNests(func))) {
    func.erase();
    return nullptr;
  }
  return func;
}

namespace {
struct ConvertSpconvToCPUPass
    : public TilingOptionsPass<spconv::impl::ConvertSpconvToCPUBase<ConvertSpconvToCPUPass>> {
  using TilingOptionsPass::TilingOptionsPass;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Conv2DOp> convs = collectUncompiledConvs(module);
    FailureOr<Tiling> request = requestedTiling();
    if (failed(request))
      return signalPassFailure();
    const Tiling &requested = *request;
    TargetGPU gpu = targetGPU();
    SymbolTable symbols(module);
    int64_t nextIndex = 0;
    for (Conv2DOp op : convs) {
      if (failed(checkLowerable(op)))
        return signalPassFailure();
      ConvShape shape = ConvShape::fromOp(op);
      Tiling tiling = chooseTiling(shape, requested, gpu);
      std::string name = nextKernelName(symbols, nextIndex);
      func::FuncOp func = emitCPUKernel(shape, tiling, module, name, op.getLoc(), unroll);
      if (!func)
        return signalPassFailure();
      symbols.insert(func);
      op->setAttr(kKernelAttr, FlatSymbolRefAttr::get(func.getSymNameAttr()));
      op->setAttr(kLaunchAttr, makeLaunchAttr(&getContext(), shape, tiling));
      addWeightsEntry(module, name, op);
    }
  }
};
} // namespace
