//===- TuningTable.cpp - Tilings measured on a GPU -------------------------===//
//
// The table is JSON (docs/design.md, "Tuning table"); llvm::json's ObjectMapper reads it,
// so a wrong field is reported with its path in the document.
//
//===----------------------------------------------------------------------===//

#include "spconv/Conversion/ConvTemplate/TuningTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <array>
#include <cstdlib>

using namespace spconv;

namespace {
/// The conv fields of a key, in the order keyText prints them.
struct KeyFields {
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  std::array<int64_t, 2> stride{}, dilation{};
  std::array<int64_t, 4> padding{};
  int64_t groups = 1;
  std::string dtype, accumulate, pairing;
  // How the conv's tensors are stored (layoutName); an entry without one is "nchw".
  std::string layout = "nchw";
};
} // namespace

static std::string keyText(const KeyFields &f) {
  return llvm::formatv("n{0}c{1}h{2}w{3}k{4}r{5}s{6}st{7}x{8}pad{9}.{10}.{11}.{12}dil{13}x{14}"
                       "g{15}:{16}:{17}:{18}",
                       f.n, f.c, f.h, f.w, f.k, f.r, f.s, f.stride[0], f.stride[1],
                       f.padding[0], f.padding[1], f.padding[2], f.padding[3], f.dilation[0],
                       f.dilation[1], f.groups, f.dtype, f.accumulate, f.pairing)
             .str() +
         // NCHW keys are what they were before layouts.
         (f.layout == "nchw" ? std::string() : ":" + f.layout);
}

/// The key of `f` without its pairing: what a choose_pairing entry is matched by.
static std::string convKeyText(KeyFields f) {
  f.pairing = "?";
  return keyText(f);
}

static KeyFields fieldsOf(const ConvShape &shape) {
  ConvShape l = shape.logical();
  KeyFields f;
  f.n = l.n, f.c = l.c, f.h = l.h, f.w = l.w, f.k = l.k, f.r = l.r, f.s = l.s;
  f.stride = {l.sh, l.sw};
  f.dilation = {l.dh, l.dw};
  f.padding = {l.pt, l.pl, l.pb, l.pr};
  f.groups = l.groups;
  f.dtype = precisionName(shape.precision);
  f.accumulate = precisionName(shape.isHalf() ? shape.accumulate : Precision::f32);
  f.pairing = pairingName(shape.pairing);
  f.layout = layoutName(shape.layout);
  return f;
}

std::string TuningTable::keyOf(const ConvShape &shape) { return keyText(fieldsOf(shape)); }

std::string TuningTable::nchwKeyOf(const ConvShape &shape) {
  KeyFields f = fieldsOf(shape);
  f.layout = layoutName(Layout::nchw);
  return keyText(f);
}

namespace {
/// The fields an entry sets, with their option names. minBlocksPerSM is not among them: an
/// entry's goes through the options, as --min-blocks-per-sm does (TunedTiling::minBlocksPerSM).
struct TunedField {
  int64_t Tiling::*field;
  const char *option;
};
constexpr TunedField kTunedFields[] = {
    {&Tiling::blockK, "block-k"},
    {&Tiling::outputsPerThread, "outputs-per-thread"},
    {&Tiling::tileP, "tile-p"},
    {&Tiling::threadsQ, "threads-q"},
    {&Tiling::chunkC, "chunk-c"},
    {&Tiling::splitC, "split-c"},
    {&Tiling::chunkLoop, "chunk-loop"},
    {&Tiling::imagesPerBlock, "images-per-block"},
    {&Tiling::blockOrder, "block-order"},
    {&Tiling::asyncStaging, "async-staging"},
    {&Tiling::columnOrder, "column-order"},
    {&Tiling::directInputs, "direct-inputs"},
    {&Tiling::channelVector, "channel-vector"},
    {&Tiling::loadAhead, "load-ahead"},
    {&Tiling::dynamicShared, "dynamic-shared"},
    {&Tiling::clusterSplit, "cluster-split"},
};
} // namespace

Tiling spconv::fillFromTuned(Tiling requested, const Tiling &tuned) {
  // An entry's column order orders its own outputs a thread. Where a flag asks for another
  // count, the entry says nothing about their order: the heuristic picks it, and no
  // unhonoured-request warning blames a column order nobody asked for.
  bool keepsOrderOpen = requested.columnOrder == 0 && requested.outputsPerThread != 0 &&
                        requested.outputsPerThread != tuned.outputsPerThread;
  for (const TunedField &f : kTunedFields)
    if (requested.*f.field == 0)
      requested.*f.field = tuned.*f.field;
  if (keepsOrderOpen)
    requested.columnOrder = 0;
  return requested;
}

std::vector<std::string> spconv::requestOverrides(const Tiling &requested, const Tiling &tuned) {
  std::vector<std::string> options;
  for (const TunedField &f : kTunedFields)
    if (requested.*f.field != 0 && requested.*f.field != tuned.*f.field)
      options.push_back(f.option);
  return options;
}

namespace {
/// A boolean of the sidecar's tiling as the option value it stands for: 2 on, 1 off.
bool mapSwitch(llvm::json::ObjectMapper &o, llvm::StringLiteral name, int64_t &out) {
  bool on = false;
  if (!o.map(name, on))
    return false;
  out = on ? 2 : 1;
  return true;
}

/// A positive integer field.
bool mapPositive(const llvm::json::Object &obj, llvm::json::Path path, llvm::StringLiteral name,
                 int64_t &out) {
  const llvm::json::Value *v = obj.get(name);
  std::optional<int64_t> i = v ? v->getAsInteger() : std::nullopt;
  if (!i || *i < 1) {
    path.field(name).report("expected a positive integer");
    return false;
  }
  out = *i;
  return true;
}
/// An array of exactly N integers.
template <size_t N>
bool mapInts(llvm::json::ObjectMapper &o, llvm::json::Path path, llvm::StringLiteral name,
             std::array<int64_t, N> &out) {
  std::vector<int64_t> v;
  if (!o.map(name, v))
    return false;
  if (v.size() != N) {
    path.field(name).report(N == 2 ? llvm::StringLiteral("expected 2 integers")
                                   : llvm::StringLiteral("expected 4 integers"));
    return false;
  }
  std::copy(v.begin(), v.end(), out.begin());
  return true;
}
} // namespace

/// The sidecar's "tiling" object (docs/launch-abi.md): every field, as requests.
static bool tunedFromJSON(const llvm::json::Value &v, TunedTiling &t, llvm::json::Path p) {
  const llvm::json::Object *obj = v.getAsObject();
  if (!obj) {
    p.report("expected the sidecar's tiling object");
    return false;
  }
  llvm::json::ObjectMapper o(v, p);
  Tiling &tl = t.tiling;
  int64_t minBlocks = 0;
  int64_t smAffine = 0;
  bool ok = mapPositive(*obj, p, "block_k", tl.blockK) &&
            mapPositive(*obj, p, "outputs_per_thread", tl.outputsPerThread) &&
            mapPositive(*obj, p, "tile_p", tl.tileP) &&
            mapPositive(*obj, p, "threads_q", tl.threadsQ) &&
            mapPositive(*obj, p, "chunk_c", tl.chunkC) &&
            mapPositive(*obj, p, "split_c", tl.splitC) &&
            mapPositive(*obj, p, "images_per_block", tl.imagesPerBlock) &&
            mapSwitch(o, "chunk_loop", tl.chunkLoop) &&
            mapSwitch(o, "channel_block_major", tl.blockOrder) &&
            mapSwitch(o, "async_staging", tl.asyncStaging) &&
            mapSwitch(o, "adjacent_columns", tl.columnOrder) &&
            mapSwitch(o, "direct_inputs", tl.directInputs) &&
            mapSwitch(o, "sm_affine", smAffine) && o.map("min_blocks_per_sm", minBlocks);
  if (!ok)
    return false;
  if (minBlocks < 0) {
    p.field("min_blocks_per_sm").report("expected 0 (no cap) or a positive integer");
    return false;
  }
  // Channel vectors came later: an entry without one was measured reading one channel a
  // load, and keeps doing so.
  tl.channelVector = 1;
  if (obj->get("channel_vector") &&
      (!o.map("channel_vector", tl.channelVector) ||
       (tl.channelVector != 1 && tl.channelVector != 2 && tl.channelVector != 4))) {
    p.field("channel_vector").report("expected 1, 2 or 4");
    return false;
  }
  // Loads ahead came later still: an entry without them was measured without.
  static_assert(kMaxLoadAhead == 64, "the message below names the limit");
  tl.loadAhead = 0;
  if (obj->get("load_ahead") &&
      (!o.map("load_ahead", tl.loadAhead) || tl.loadAhead < 0 || tl.loadAhead > kMaxLoadAhead)) {
    p.field("load_ahead").report("expected 0 to 64 (kMaxLoadAhead)");
    return false;
  }
  // So did dynamic shared memory: an entry without it staged into static shared memory.
  tl.dynamicShared = 1;
  if (obj->get("dynamic_shared") && !mapSwitch(o, "dynamic_shared", tl.dynamicShared))
    return false;
  // And cluster splits: an entry without one ran each tile in one block.
  tl.clusterSplit = 1;
  if (obj->get("cluster_split") && (!o.map("cluster_split", tl.clusterSplit) ||
                                    tl.clusterSplit < 1 || tl.clusterSplit > kMaxClusterSplit)) {
    p.field("cluster_split").report("expected 1 to 8 (kMaxClusterSplit)");
    return false;
  }
  // The sidecar says 0 where ptxas had no cap; ArtifactOptions says -1.
  t.minBlocksPerSM = minBlocks == 0 ? -1 : minBlocks;
  t.smAffinity = smAffine;
  return true;
}

static bool keyFromJSON(const llvm::json::Value &v, KeyFields &f, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  if (!o)
    return false;
  const llvm::json::Value *conv = v.getAsObject()->get("conv");
  if (!conv) {
    p.field("conv").report("missing");
    return false;
  }
  llvm::json::Path cp = p.field("conv");
  llvm::json::ObjectMapper c(*conv, cp);
  const llvm::json::Object *co = conv->getAsObject();
  if (!c || !co)
    return false;
  bool ok = mapPositive(*co, cp, "N", f.n) && mapPositive(*co, cp, "C", f.c) &&
            mapPositive(*co, cp, "H", f.h) && mapPositive(*co, cp, "W", f.w) &&
            mapPositive(*co, cp, "K", f.k) && mapPositive(*co, cp, "R", f.r) &&
            mapPositive(*co, cp, "S", f.s) && mapInts(c, cp, "stride", f.stride) &&
            mapInts(c, cp, "padding", f.padding) && mapInts(c, cp, "dilation", f.dilation) &&
            c.mapOptional("groups", f.groups) && o.map("dtype", f.dtype) &&
            o.map("accumulate", f.accumulate) && o.map("pairing", f.pairing) &&
            o.mapOptional("layout", f.layout);
  if (!ok)
    return false;
  if (f.layout != "nchw" && f.layout != "image_pairs") {
    p.field("layout").report("expected nchw or image_pairs");
    return false;
  }
  if (f.layout == "image_pairs" && f.pairing != "images") {
    p.field("layout").report("image_pairs stores the images pairing: expected pairing images");
    return false;
  }
  for (auto [value, name, allowed, message] :
       {std::make_tuple(&f.dtype, llvm::StringLiteral("dtype"), "f32 f16 bf16",
                        llvm::StringLiteral("expected f32, f16 or bf16")),
        std::make_tuple(&f.accumulate, llvm::StringLiteral("accumulate"), "f32 f16 bf16",
                        llvm::StringLiteral("expected f32, f16 or bf16")),
        std::make_tuple(&f.pairing, llvm::StringLiteral("pairing"), "none images rows columns adjacent",
                        llvm::StringLiteral("expected none, images, rows or columns"))}) {
    llvm::SmallVector<llvm::StringRef> words;
    llvm::StringRef(allowed).split(words, ' ');
    if (!llvm::is_contained(words, *value)) {
      p.field(name).report(message);
      return false;
    }
  }
  return true;
}

llvm::Expected<TuningTable> TuningTable::parse(llvm::StringRef text, llvm::StringRef name) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tuning table " + name + ": " + why);
  };
  llvm::Expected<llvm::json::Value> doc = llvm::json::parse(text);
  if (!doc)
    return fail(llvm::toString(doc.takeError()));
  llvm::json::Path::Root root("table");
  llvm::json::Path p(root);
  llvm::json::ObjectMapper o(*doc, p);
  std::string format;
  int64_t version = 0;
  std::optional<int64_t> sms;
  static_assert(TargetGPU::kMaxSMs == 4096, "the message below names the limit");
  TuningTable table;
  const llvm::json::Array *entries = nullptr;
  if (o && o.map("format", format) && o.map("version", version) &&
      o.map("device", table.deviceName) && o.map("sms", sms) &&
      o.mapOptional("falls_back_to", table.fallbackName)) {
    if (format != "spconv-tuning-table")
      p.field("format").report("expected \"spconv-tuning-table\"");
    else if (version != 1)
      p.field("version").report("this compiler reads version 1");
    else if (sms && (*sms < 1 || *sms > TargetGPU::kMaxSMs))
      p.field("sms").report("expected the device's SM count, 1 to 4096");
    else if (!(entries = doc->getAsObject()->getArray("entries")))
      p.field("entries").report("expected an array");
  }
  if (!entries)
    return fail(llvm::toString(root.getError()));
  table.sms = sms.value_or(0);
  llvm::json::Path ep = p.field("entries");
  for (size_t i = 0; i < entries->size(); ++i) {
    const llvm::json::Value &e = (*entries)[i];
    llvm::json::Path at = ep.index(i);
    KeyFields key;
    Entry entry;
    std::array<int64_t, 2> nnz{};
    llvm::json::ObjectMapper eo(e, at);
    const llvm::json::Value *tiling = e.getAsObject() ? e.getAsObject()->get("tiling") : nullptr;
    bool ok = keyFromJSON(e, key, at) && mapInts(eo, at, "nnz", nnz) &&
              eo.mapOptional("source", entry.tuned.source) &&
              eo.mapOptional("choose_pairing", entry.choosePairing);
    // Only a paired conv has a pairing to choose; an entry of pairing "none" (f32, or a
    // half-precision key that no conv has) would choose nothing.
    if (ok && entry.choosePairing && (key.dtype == "f32" || key.pairing == "none")) {
      at.field("choose_pairing")
          .report("expected false: only a half-precision entry with a pairing (images, rows, "
                  "columns or adjacent) can choose one");
      ok = false;
    }
    if (ok && !tiling) {
      at.field("tiling").report("missing");
      ok = false;
    }
    ok = ok && tunedFromJSON(*tiling, entry.tuned, at.field("tiling"));
    if (ok && (nnz[0] < 0 || nnz[1] < nnz[0])) {
      at.field("nnz").report("expected [min, max] with 0 <= min <= max");
      ok = false;
    }
    if (!ok)
      return fail(llvm::toString(root.getError()));
    entry.key = keyText(key);
    entry.convKey = convKeyText(key);
    entry.pairing = key.pairing == "images"    ? Pairing::images
                    : key.pairing == "rows"    ? Pairing::rows
                    : key.pairing == "columns" ? Pairing::columns
                    : key.pairing == "adjacent" ? Pairing::adjacent
                                               : Pairing::none;
    entry.nnzMin = nnz[0];
    entry.nnzMax = nnz[1];
    table.entries.push_back(std::move(entry));
  }
  // Entries are otherwise tried in order, the first match winning; a pairing, though, is
  // decided before the tiling's entry is looked up, so two entries that would both choose
  // one conv's pairing leave the choice to their order in the file: refused instead.
  for (size_t j = 0; j < table.entries.size(); ++j) {
    const Entry &b = table.entries[j];
    if (!b.choosePairing)
      continue;
    for (size_t i = 0; i < j; ++i) {
      const Entry &a = table.entries[i];
      if (!a.choosePairing || a.convKey != b.convKey || a.nnzMax < b.nnzMin ||
          b.nnzMax < a.nnzMin)
        continue;
      return fail(llvm::formatv("table.entries[{0}] ({1}) and table.entries[{2}] ({3}) both "
                                "choose the pairing of one conv for {4} to {5} nonzero weights",
                                i, pairingName(a.pairing), j, pairingName(b.pairing),
                                std::max(a.nnzMin, b.nnzMin), std::min(a.nnzMax, b.nnzMax)));
    }
  }
  return std::move(table);
}

std::string TuningTable::resolvePath(std::optional<llvm::StringRef> flag) {
  std::string path;
  if (flag)
    path = flag->str();
  else if (const char *env = std::getenv("SPCONV_TUNING_TABLE"))
    path = env;
  return path == "none" ? std::string() : path;
}

static llvm::Expected<TuningTable> loadOne(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "tuning table " + path + ": " + buffer.getError().message());
  return TuningTable::parse((*buffer)->getBuffer(), path);
}

llvm::Expected<TuningTable> TuningTable::load(llvm::StringRef path) {
  llvm::Expected<TuningTable> table = loadOne(path);
  if (!table || table->fallbackName.empty())
    return table;
  llvm::SmallString<256> fallbackPath(table->fallbackName);
  if (!llvm::sys::path::is_absolute(fallbackPath)) {
    fallbackPath = llvm::sys::path::parent_path(path);
    llvm::sys::path::append(fallbackPath, table->fallbackName);
  }
  llvm::Expected<TuningTable> fallback = loadOne(fallbackPath);
  if (!fallback)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tuning table " + path + " falls back to " + fallbackPath +
                                       ": " + llvm::toString(fallback.takeError()));
  if (!fallback->fallbackName.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tuning table " + path + " falls back to " + fallbackPath +
                                       ", which falls back to " + fallback->fallbackName +
                                       ": a fallback table may not fall back further");
  // What this table measured wins: lookups and pairing choices take the first entry that
  // matches, and the fallback's entries follow this table's own.
  for (Entry &e : fallback->entries)
    table->entries.push_back(std::move(e));
  if (!table->sms)
    table->sms = fallback->sms;
  return table;
}

const TunedTiling *TuningTable::lookup(const ConvShape &shape, int64_t nnz) const {
  auto find = [&](const std::string &key) -> const TunedTiling * {
    for (const Entry &e : entries)
      if (e.key == key && nnz >= e.nnzMin && nnz <= e.nnzMax)
        return &e.tuned;
    return nullptr;
  };
  if (const TunedTiling *t = find(keyOf(shape)))
    return t;
  // A conv stored as image pairs has the images pairing's word shape: without an entry of
  // its own it takes the NCHW conv's (docs/design.md, "Tuning table").
  if (shape.layout != Layout::nchw)
    return find(nchwKeyOf(shape));
  return nullptr;
}

std::optional<TuningTable::PairingChoice> TuningTable::choosePairing(const ConvShape &shape,
                                                                     int64_t nnz) const {
  if (!shape.isHalf())
    return std::nullopt;
  std::string key = convKeyText(fieldsOf(shape));
  for (const Entry &e : entries)
    if (e.choosePairing && e.convKey == key && nnz >= e.nnzMin && nnz <= e.nnzMax)
      return PairingChoice{e.pairing, &e.tuned};
  return std::nullopt;
}

bool TuningTable::mayChoosePairing(const ConvShape &shape) const {
  if (!shape.isHalf())
    return false;
  std::string key = convKeyText(fieldsOf(shape));
  return llvm::any_of(entries,
                      [&](const Entry &e) { return e.choosePairing && e.convKey == key; });
}
