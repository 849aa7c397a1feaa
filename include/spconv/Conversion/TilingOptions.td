//===- TilingOptions.td - tiling options of the conv passes --*- tablegen -*-===//
//
// The options every pass that lowers or compiles convs takes (convert-spconv-to-affine,
// -gpu and -cpu, spconv-compile-kernels), declared once: spconv/Conversion/TilingOptions.h
// turns them into the Tiling they request.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_TILINGOPTIONS_TD
#define SPCONV_CONVERSION_TILINGOPTIONS_TD

include "mlir/Pass/PassBase.td"

// 0 picks the heuristic value (docs/design.md, "Tiling heuristic").
defvar SpconvTilingOptions = [
  Option<"blockK", "block-k", "int64_t", "0", "Output channels per thread (0 = heuristic)">,
  Option<"outputsPerThread", "outputs-per-thread", "int64_t", "0",
         "Output columns per thread (0 = heuristic)">,
  Option<"tileP", "tile-p", "int64_t", "0", "Output rows per thread block (0 = heuristic)">,
  Option<"threadsQ", "threads-q", "int64_t", "0",
         "Threads along the output columns of a block (0 = heuristic)">,
  Option<"chunkC", "chunk-c", "int64_t", "0",
         "Input channels staged in shared memory at a time (0 = heuristic)">,
  Option<"splitC", "split-c", "int64_t", "0",
         "Warp groups that split a block's chunks (0 = heuristic, 1 = no split)">,
  Option<"chunkLoop", "chunk-loop", "int64_t", "0",
         "How a group walks its chunks (0 = heuristic: a loop for 4 warp groups at block-k <= 16 with 2+ chunks each or any group with 8+ chunks, 1 = straight-line, 2 = loop)">,
  Option<"imagesPerBlock", "images-per-block", "int64_t", "0",
         "Images a thread block computes side by side, in lock-step (0 = heuristic: blocks of <= 2 warps pack up to 256 threads, 4-warp blocks of filters over 1x1 with 8+ channel blocks 2 images; 1 = one image; not with split-c > 1)">,
  Option<"blockOrder", "block-order", "int64_t", "0",
         "Grid order (0 = heuristic: 1; 1 = (tiles, channel blocks, images); 2 = (tiles, images, channel blocks): each wave runs fewer channel blocks' code, docs/design.md \"Instruction fetch\")">,
  Option<"asyncStaging", "async-staging", "int64_t", "0",
         "How chunks are staged (0 = heuristic: 2 for a chunk loop over packed images with an unstrided filter over 1x1, in half precision where its words lie whole (the image-pair layout), else 1; 1 = loads and stores through registers; 2 = cp.async copies, double-buffered in a chunk loop, in half precision of whole words only, docs/design.md \"Asynchronous staging\")">,
  Option<"columnOrder", "column-order", "int64_t", "0",
    "Which output columns a thread computes with outputs-per-thread > 1 (0 = heuristic: 1; 1 = strided by threads-q; 2 = adjacent, sharing their inputs along the filter width, docs/design.md \"Adjacent outputs\")">,
  Option<"directInputs", "direct-inputs", "int64_t", "0",
    "Where a thread's inputs come from (0 = heuristic; 1 = staged through shared memory; 2 = read directly into registers where the filter is 1x1 and a thread has one output, docs/design.md \"Direct inputs\")">,
  Option<"channelVector", "channel-vector", "int64_t", "0",
    "Input channels one shared load reads (0 = heuristic: 1; 1, 2 or 4: with 2 or 4 the staged tile interleaves the chunk's channels so a thread reads them with one ld.shared.v2/.v4; staged inputs with one output per thread only, docs/design.md \"Channel vectors\")">,
  Option<"loadAhead", "load-ahead", "int64_t", "0",
    "Global loads of the next straight-line chunk a thread issues before this chunk's FMAs (0 = none, or a tuning table entry's; 1-64 input words, held in registers through the FMAs; register staging of straight-line chunks only, docs/design.md \"Loads ahead\")">,
  Option<"dynamicShared", "dynamic-shared", "int64_t", "0",
    "Where the staged tiles live (0 = heuristic: 1; 1 = static shared memory, at most 48 KB; 2 = dynamic shared memory up to 227 KB, opted in by the runtimes, so a double-buffered chunk loop keeps whole chunks, docs/design.md \"Dynamic shared memory\")">,
  Option<"clusterSplit", "cluster-split", "int64_t", "0",
    "Blocks of a cluster that split a tile's input channels between them, each on its own SM (0 = heuristic: 1; 2-8: each block runs 1/N of the chunks with its split-c warp groups and the partial sums meet in distributed shared memory; sm_90, not with SM affinity, images per block or cluster-size, docs/design.md \"Cluster split\")">,
  Option<"numSMs", "num-sms", "int64_t", "0",
    "SMs of the target GPU, over which the heuristic counts waves of blocks (0 = 132, an H100 SXM's or H200's; docs/design.md \"Target GPU\")">
];

#endif // SPCONV_CONVERSION_TILINGOPTIONS_TD
