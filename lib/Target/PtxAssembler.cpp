//===- PtxAssembler.cpp - ptxas and nvlink, in parallel and in budget -----===//
#include "spconv/Target/PtxAssembler.h"
#include "spconv/Target/SassSpillCheck.h"
#include "spconv/Transforms/TemplateCache.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <chrono>
#include <csignal>
#include <cstring>
#include <unistd.h>
#include <thread>

using namespace spconv;
using llvm::StringRef;

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What SIGINT/SIGTERM must undo while ptxas runs, kept where a signal handler can read it
/// without allocating: the scratch directory and the ptxas processes. LLVM's handlers
/// unlink the registered files first, then call onInterrupt, which stops the children,
/// removes the (by then empty) directory and dies of the signal's default action.
struct InterruptState {
  static constexpr int kMaxChildren = 256;
  std::atomic<pid_t> children[kMaxChildren] = {};
  char dir[4096] = {};
  std::atomic<bool> dirSet{false};
};
InterruptState interruptState;

void onInterrupt() {
  for (auto &pid : interruptState.children)
    if (pid_t p = pid.load(); p > 0)
      ::kill(p, SIGTERM);
  if (interruptState.dirSet.load())
    ::rmdir(interruptState.dir);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::raise(SIGTERM);
}

void trackChild(pid_t pid, bool add) {
  for (auto &slot : interruptState.children) {
    pid_t expected = add ? 0 : pid;
    if (slot.compare_exchange_strong(expected, add ? pid : 0))
      return;
  }
}

/// One directory per process for every file handed to ptxas and nvlink. Files are
/// registered with LLVM's signal handlers as they are created, so SIGINT/SIGTERM removes
/// them (and onInterrupt the directory); the destructor removes whatever is left and the
/// directory itself.
class ScratchDir {
public:
  llvm::Error create() {
    llvm::SmallString<128> dir;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("spconv", dir))
      return error("cannot create a temporary directory: " + ec.message());
    path = std::string(dir);
    if (path.size() < sizeof(interruptState.dir)) {
      std::memcpy(interruptState.dir, path.c_str(), path.size() + 1);
      interruptState.dirSet = true;
      llvm::sys::SetInterruptFunction(onInterrupt);
    }
    return llvm::Error::success();
  }
  /// A path in the directory, removed with it.
  std::string file(StringRef name) {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    files.push_back(std::string(p));
    llvm::sys::RemoveFileOnSignal(files.back());
    return files.back();
  }
  ~ScratchDir() {
    for (const std::string &f : files) {
      llvm::sys::fs::remove(f);
      llvm::sys::DontRemoveFileOnSignal(f);
    }
    if (!path.empty()) {
      interruptState.dirSet = false;
      llvm::sys::SetInterruptFunction(nullptr);
      llvm::sys::fs::remove(path);
    }
  }

private:
  std::string path;
  std::vector<std::string> files;
};

llvm::Error writeFile(StringRef path, StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  os << bytes;
  os.close();
  if (os.has_error())
    return error("cannot write '" + path + "': " + os.error().message());
  return llvm::Error::success();
}

llvm::Expected<std::string> readFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

} // namespace

std::vector<PtxasSpill> spconv::parsePtxasSpills(StringRef log, size_t job) {
  // ptxas 13: "ptxas warning : Registers are spilled to local memory in function 'f', 1288
  // bytes spill stores, 1288 bytes spill loads".
  std::vector<PtxasSpill> spills;
  constexpr StringRef kSpilled = "Registers are spilled to local memory in function '";
  while (!log.empty()) {
    auto [line, rest] = log.split('\n');
    log = rest;
    size_t at = line.find(kSpilled);
    if (at == StringRef::npos)
      continue;
    PtxasSpill spill;
    spill.job = job;
    StringRef tail = line.drop_front(at + kSpilled.size());
    // Not a structured binding: the lambda below captures `counts` (C++20 for bindings).
    std::pair<StringRef, StringRef> parts = tail.split('\'');
    StringRef counts = parts.second;
    spill.function = parts.first.str();
    auto bytesBefore = [&](StringRef what) -> int64_t {
      size_t end = counts.find(what);
      if (end == StringRef::npos)
        return 0;
      StringRef number = counts.take_front(end).rtrim();
      number = number.drop_front(number.find_last_of(" ,") + 1);
      int64_t n = 0;
      return number.getAsInteger(10, n) ? 0 : n;
    };
    spill.storeBytes = bytesBefore(" bytes spill stores");
    spill.loadBytes = bytesBefore(" bytes spill loads");
    spills.push_back(std::move(spill));
  }
  return spills;
}

namespace {
/// How a tool's process ended, in words, with its log.
std::string describeFailure(StringRef tool, int rc, StringRef execError, StringRef logPath) {
  std::string what;
  if (rc == -2) {
    // LLVM reports a child killed by a signal as -2 with the signal's name.
    what = (tool + " was killed (" + execError + ")").str();
    if (StringRef(execError).contains_insensitive("kill"))
      what += ": out of memory? Lower --code-budget or --ptxas-memory-budget";
  } else {
    what = (tool + " failed (exit " + llvm::Twine(rc) + ")").str();
    if (!execError.empty())
      what += (": " + execError).str();
  }
  if (auto log = llvm::MemoryBuffer::getFile(logPath); log && (*log)->getBufferSize())
    what += "\n" + (*log)->getBuffer().rtrim().str();
  return what;
}

std::string toolBeside(StringRef ptxas, StringRef tool) {
  llvm::SmallString<256> p(llvm::sys::path::parent_path(ptxas));
  llvm::sys::path::append(p, tool);
  return std::string(p);
}

/// The cache key of an object: everything that decides ptxas's output.
std::string objectKey(const PtxasJob &job, const PtxasSettings &s, StringRef ptxasVersion) {
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(job.ptx));
  return llvm::formatv("ptxas-object v1|{0}|{1}|{2}|maxrreg{3}|{4:x16}{5:x16}|{6}", ptxasVersion,
                       s.chip, ptxasOptimisationFlag(s), job.maxRegisters, h.high64, h.low64,
                       job.ptx.size())
      .str();
}

std::string ptxasVersion(StringRef ptxas, ScratchDir &scratch) {
  std::string out = scratch.file("ptxas-version.txt");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out), StringRef(out)};
  StringRef args[] = {ptxas, "--version"};
  if (llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects) != 0)
    return "unknown";
  auto text = readFile(out);
  if (!text) {
    llvm::consumeError(text.takeError());
    return "unknown";
  }
  return StringRef(*text).trim().rsplit('\n').second.str();
}
} // namespace

namespace {
std::string ptxasNotFound(StringRef ptxas) {
  return ("ptxas not found at '" + ptxas +
          "': install the CUDA toolkit or pass --ptxas-path (or set SPCONV_PTXAS / CUDA_PATH)")
      .str();
}

std::string overBudget(const PtxasJob &job, uint64_t budget) {
  return llvm::formatv("{0}: {1} PTX instructions would need about {2} MiB in ptxas, over the "
                       "memory budget of {3} MiB (--ptxas-memory-budget); lower --code-budget "
                       "or --block-k",
                       job.label, job.instructions, estimatePtxasBytes(job.instructions) >> 20,
                       budget >> 20)
      .str();
}
} // namespace

std::string spconv::ptxasOptimisationFlag(const PtxasSettings &settings) {
  if (settings.fastCompile != "0")
    return "--Ofast-compile=" + settings.fastCompile;
  return "-O" + settings.optLevel;
}

uint64_t spconv::estimatePtxasBytes(int64_t instructions) {
  // ptxas 13.0 at -O3 on spconv's straight-line kernels: about 40 MB to start and 6 KB per
  // PTX instruction (docs/compile-time.md, "ptxas memory"), with a margin of 1.5x.
  constexpr uint64_t kBase = 64ull << 20, kPerInstruction = 9 << 10;
  return kBase + kPerInstruction * uint64_t(std::max<int64_t>(instructions, 0));
}

/// After a ptxas run that spilled (`spilled`): its object's SASS, disassembled into
/// `listingFile`, checked for reloads of stack bytes no spill wrote (SassSpillCheck.h). Returns
/// the error that fails the compile when there is one; a disassembler missing or failing
/// leaves the object unchecked, and the report says why (the spill warning repeats it).
static std::optional<std::string> checkSpilledObject(const PtxasSettings &settings, bool spilled,
                                                     StringRef object, StringRef listingFile,
                                                     PtxasReport &report) {
  if (!spilled)
    return std::nullopt;
  if (settings.cuobjdump.empty()) {
    report.sassUnchecked = "no cuobjdump beside ptxas or on PATH ($SPCONV_CUOBJDUMP)";
    return std::nullopt;
  }
  llvm::Expected<std::string> sass = disassemble(settings.cuobjdump, object, listingFile);
  if (!sass) {
    report.sassUnchecked = llvm::toString(sass.takeError());
    return std::nullopt;
  }
  int functions = 0;
  std::vector<SuspectReload> suspects = findSuspectReloads(*sass, &functions);
  if (functions == 0) {
    report.sassUnchecked = settings.cuobjdump + " -sass printed no SASS function";
    return std::nullopt;
  }
  if (suspects.empty())
    return std::nullopt;
  const SuspectReload &r = suspects.front();
  return llvm::formatv("ptxas reloaded a spill with a load wider than what was stored ({0} "
                       "such reload{1}; first in {2} at {3}: `{4}`), so the kernel would "
                       "compute with stack bytes nobody wrote, a ptxas 13.0 miscompile of "
                       "spilled 16-bit halves (docs/tuning-log.md, \"Partial spill reloads\"); "
                       "a smaller --block-k or --min-blocks-per-sm avoids the spill "
                       "($SPCONV_CUOBJDUMP=none skips this check)",
                       suspects.size(), suspects.size() == 1 ? "" : "s", r.function,
                       r.address, r.instruction)
      .str();
}

llvm::Expected<std::string> spconv::assembleModule(StringRef ptx, const PtxasSettings &settings,
                                                   PtxasReport &report) {
  if (!llvm::sys::fs::can_execute(settings.ptxas))
    return error(ptxasNotFound(settings.ptxas));
  ScratchDir scratch;
  if (llvm::Error err = scratch.create())
    return std::move(err);
  std::string ptxFile = scratch.file("module.ptx"), cubinFile = scratch.file("module.cubin"),
              logFile = scratch.file("ptxas.log");
  if (llvm::Error err = writeFile(ptxFile, ptx))
    return std::move(err);
  std::string arch = "-arch=" + settings.chip, opt = ptxasOptimisationFlag(settings);
  StringRef args[] = {settings.ptxas, arch, opt, "--warn-on-spills", ptxFile, "-o", cubinFile};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile), StringRef(logFile)};
  std::string execError;
  auto start = Clock::now();
  int rc =
      llvm::sys::ExecuteAndWait(settings.ptxas, args, std::nullopt, redirects, 0, 0, &execError);
  double took = secondsSince(start);
  report.seconds += took;
  report.processSeconds += took;
  ++report.assembled;
  if (rc != 0)
    return error(describeFailure("ptxas", rc, execError, logFile));
  if (auto log = llvm::MemoryBuffer::getFile(logFile))
    report.spills = parsePtxasSpills((*log)->getBuffer(), 0);
  if (std::optional<std::string> bad = checkSpilledObject(
          settings, !report.spills.empty(), cubinFile, scratch.file("module.sass"), report))
    return error(*bad);
  return readFile(cubinFile);
}

/// Writes a pool's progress on stderr as PtxasSettings::progress asks (ProgressMode says
/// what each mode prints). Only the pool's thread calls it.
class ProgressReporter {
public:
  explicit ProgressReporter(ProgressMode mode) : mode(resolve(mode)) {}

  /// `done` of the `total` units queued so far have finished, `seconds` after the pool
  /// started; `line` is the line Log and Units print.
  void unitDone(size_t done, size_t total, double seconds, int64_t pendingInstructions,
                const std::string &line) {
    switch (mode) {
    case ProgressMode::None:
    case ProgressMode::Auto:
      return;
    case ProgressMode::Units:
      llvm::errs() << line << "\n";
      return;
    case ProgressMode::Log: {
      double quiet = logged ? secondsSince(lastLine) : seconds;
      bool tenth = (done - loggedDone) * 10 >= total;
      if ((tenth && quiet >= kLogMinSeconds) || quiet >= kLogMaxSeconds) {
        llvm::errs() << line << "\n";
        logged = true;
        lastLine = Clock::now();
        loggedDone = done;
        unlogged.clear();
      } else {
        unlogged = line;
      }
      return;
    }
    case ProgressMode::Bar:
      draw(done, total, seconds, pendingInstructions);
      return;
    }
  }

  /// Before another message on stderr: ends the line of a drawn bar.
  void interrupt() {
    if (drawnWidth) {
      llvm::errs() << "\n";
      drawnWidth = 0;
    }
  }

  /// The pool is done (or failed): the bar's line ends, the last count is logged.
  void end() {
    interrupt();
    if (!unlogged.empty())
      llvm::errs() << unlogged << "\n";
    unlogged.clear();
  }

private:
  static constexpr double kLogMinSeconds = 5, kLogMaxSeconds = 60;
  static constexpr size_t kBarWidth = 20;

  static ProgressMode resolve(ProgressMode mode) {
    if (mode != ProgressMode::Auto)
      return mode;
    return llvm::sys::Process::StandardErrIsDisplayed() ? ProgressMode::Bar
                                                        : ProgressMode::Log;
  }

  void draw(size_t done, size_t total, double seconds, int64_t pendingInstructions) {
    size_t fill = total ? std::min(done, total) * kBarWidth / total : kBarWidth;
    std::string frame = llvm::formatv("spconv: ptxas [{0}{1}] {2}/{3} units, {4:f1} s, {5} "
                                      "instructions left",
                                      std::string(fill, '#'), std::string(kBarWidth - fill, '.'),
                                      done, total, seconds, pendingInstructions)
                            .str();
    // A frame that wraps cannot be redrawn by '\r' (0 columns: not a terminal).
    if (unsigned columns = llvm::sys::Process::StandardErrColumns())
      if (frame.size() >= columns)
        frame.resize(columns - 1);
    size_t width = frame.size();
    if (width < drawnWidth)
      frame.append(drawnWidth - width, ' '); // what is left of a longer frame
    llvm::errs() << '\r' << frame;
    llvm::errs().flush();
    drawnWidth = std::max<size_t>(width, 1);
  }

  const ProgressMode mode;
  // Log: when the last line was printed, at which count, and the newest line not printed.
  bool logged = false;
  Clock::time_point lastLine;
  size_t loggedDone = 0;
  std::string unlogged;
  // Bar: the width of the frame on the line, 0 when none is.
  size_t drawnWidth = 0;
};

/// Everything the pool's thread and its producer share. `mutex` guards the queue, the
/// objects, `closed`, `abort`, `failure` and the report's cacheHits and failedJob; the
/// thread alone touches `running` and the rest of the report until it is joined.
struct PtxasPool::State {
  State(const PtxasSettings &settings, PtxasReport &report)
      : settings(settings), report(report), cache(settings.cacheDir, "o"),
        progress(settings.progress) {}

  struct Running {
    size_t job;
    PtxasJob *what; // taken under the lock: jobs may grow while this runs
    llvm::sys::ProcessInfo process;
    Clock::time_point start;
    uint64_t estimate;
    std::string object, log;
  };

  const PtxasSettings settings;
  PtxasReport &report;
  ScratchDir scratch;
  TemplateCache cache;
  std::string version;
  Clock::time_point start;

  std::mutex mutex;
  std::condition_variable wake;
  // Jobs never move once added (the thread reads one while the producer adds others).
  std::vector<std::unique_ptr<PtxasJob>> jobs;
  std::vector<size_t> queued;
  /// PTX instructions of the units queued or running, for the progress line.
  int64_t pendingInstructions = 0;
  std::vector<std::string> objects;
  size_t done = 0;
  bool closed = false, abort = false;
  std::optional<std::string> failure;

  std::vector<Running> running;
  uint64_t inUse = 0;
  ProgressReporter progress; // the thread's
  std::thread thread;

  void run();
  /// Starts queued jobs while the job count and the budget allow; false after a failure.
  bool startQueued(std::unique_lock<std::mutex> &lock);
  /// Reaps finished runs; false after a failure. Called without the lock.
  bool reap(bool &reaped);
  void fail(std::string message, size_t job) {
    std::lock_guard<std::mutex> guard(mutex);
    if (!failure) {
      failure = std::move(message);
      report.failedJob = job;
    }
  }
  void stopRunning() {
    for (Running &r : running) {
      ::kill(r.process.Pid, SIGTERM);
      llvm::sys::Wait(r.process, /*SecondsToWait=*/std::nullopt);
      trackChild(r.process.Pid, /*add=*/false);
    }
    running.clear();
  }
};

bool PtxasPool::State::startQueued(std::unique_lock<std::mutex> &lock) {
  // While the producer still lowers and folds it keeps a core of the `jobs`: three
  // processes on two cores made its template builds 1.5x slower and the whole ResNet-50
  // N = 64 compile no faster than running ptxas after it (docs/compile-time.md).
  unsigned allowed = std::max(1u, settings.jobs);
  unsigned maxJobs = closed || allowed == 1 ? allowed : allowed - 1;
  std::string arch = "-arch=" + settings.chip, opt = ptxasOptimisationFlag(settings);
  while (!queued.empty() && running.size() < maxJobs) {
    // Largest first: the long poles start early and small units fill the gaps.
    auto pick = llvm::max_element(queued, [&](size_t a, size_t b) {
      return jobs[a]->instructions < jobs[b]->instructions;
    });
    size_t index = *pick;
    PtxasJob &job = *jobs[index]; // stays put when jobs grows (see State::jobs)
    uint64_t estimate = estimatePtxasBytes(job.instructions);
    if (!running.empty() && settings.memoryBudget && inUse + estimate > settings.memoryBudget)
      return true;
    // Off the queue before the lock is let go: the producer may add to it meanwhile.
    queued.erase(pick);
    lock.unlock();
    std::string stem = "unit" + std::to_string(index);
    std::string ptxFile = scratch.file(stem + ".ptx");
    Running r{index, &job, {}, Clock::now(), estimate, scratch.file(stem + ".o"),
              scratch.file(stem + ".log")};
    if (llvm::Error err = writeFile(ptxFile, job.ptx)) {
      fail(llvm::toString(std::move(err)), index);
      lock.lock();
      return false;
    }
    std::string maxReg = "--maxrregcount=" + std::to_string(job.maxRegisters);
    llvm::SmallVector<StringRef> args{settings.ptxas, "-c", arch, opt, "--warn-on-spills"};
    if (job.maxRegisters > 0)
      args.push_back(maxReg);
    args.append({ptxFile, "-o", r.object});
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(r.log), StringRef(r.log)};
    std::string execError;
    bool failedToStart = false;
    r.process = llvm::sys::ExecuteNoWait(settings.ptxas, args, std::nullopt, redirects, 0,
                                         &execError, &failedToStart);
    if (failedToStart) {
      fail("cannot start ptxas: " + execError, index);
      lock.lock();
      return false;
    }
    trackChild(r.process.Pid, /*add=*/true);
    inUse += estimate;
    report.peakEstimate = std::max(report.peakEstimate, inUse);
    running.push_back(std::move(r));
    lock.lock();
  }
  return true;
}

bool PtxasPool::State::reap(bool &reaped) {
  for (size_t i = 0; i < running.size();) {
    Running &r = running[i];
    std::string execError;
    llvm::sys::ProcessInfo status = llvm::sys::Wait(r.process, /*SecondsToWait=*/0, &execError);
    if (status.Pid == 0) { // still running
      ++i;
      continue;
    }
    reaped = true;
    trackChild(r.process.Pid, /*add=*/false);
    PtxasJob &job = *r.what;
    double took = secondsSince(r.start);
    if (status.ReturnCode != 0) {
      fail(describeFailure("ptxas", status.ReturnCode, execError, r.log), r.job);
      running.erase(running.begin() + i);
      return false;
    }
    llvm::Expected<std::string> object = readFile(r.object);
    if (!object) {
      fail(llvm::toString(object.takeError()), r.job);
      running.erase(running.begin() + i);
      return false;
    }
    size_t spillsBefore = report.spills.size();
    if (auto log = llvm::MemoryBuffer::getFile(r.log))
      for (PtxasSpill &spill : parsePtxasSpills((*log)->getBuffer(), r.job))
        report.spills.push_back(std::move(spill));
    // Checked before the cache keeps it: a miscompiled object is never reused.
    if (std::optional<std::string> bad =
            checkSpilledObject(settings, report.spills.size() > spillsBefore, r.object,
                               scratch.file("unit" + std::to_string(r.job) + ".sass"),
                               report)) {
      fail(*bad, r.job);
      running.erase(running.begin() + i);
      return false;
    }
    if (!settings.cacheDir.empty())
      if (std::optional<std::string> err =
              cache.storeBytes(objectKey(job, settings, version), *object)) {
        progress.interrupt();
        llvm::errs() << "spconv: warning: object cache: " << *err << "\n";
      }
    ++report.assembled;
    report.processSeconds += took;
    report.instructionsAssembled += job.instructions;
    if (took > report.slowestSeconds) {
      report.slowestSeconds = took;
      report.slowestLabel = job.label;
    }
    inUse -= r.estimate;
    std::string().swap(job.ptx); // assembled: its text is in the program already
    size_t finished, total;
    int64_t pending;
    {
      std::lock_guard<std::mutex> guard(mutex);
      objects[r.job] = std::move(*object);
      finished = ++done;
      total = jobs.size();
      pending = pendingInstructions -= job.instructions;
    }
    // What is left, and the rate so far, so a user can tell how long the rest will take
    // (the producer may still queue more; docs/compile-time.md, "What a warm compile costs").
    if (settings.progress != ProgressMode::None) {
      double seconds = secondsSince(start);
      progress.unitDone(
          finished, total, seconds, pending,
          llvm::formatv("spconv: ptxas {0}/{1} units queued, {2:f1} s; slowest: {3} ({4:f1} "
                        "s); {5} PTX instructions left, {6} a second per ptxas process so far",
                        finished, total, seconds, report.slowestLabel, report.slowestSeconds,
                        pending,
                        int64_t(report.instructionsAssembled /
                                std::max(report.processSeconds, 1e-3)))
              .str());
    }
    running.erase(running.begin() + i);
  }
  return true;
}

void PtxasPool::State::run() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!abort && !failure) {
    if (!startQueued(lock))
      break;
    if (running.empty()) {
      if (closed && queued.empty())
        break;
      wake.wait(lock); // for a job, the end of the input, or an abort
      continue;
    }
    lock.unlock();
    bool reaped = false;
    bool ok = reap(reaped);
    // Nothing finished: sleep briefly, or until a new job may start.
    if (ok && !reaped)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lock.lock();
    if (!ok)
      break;
  }
  lock.unlock();
  // On a failure or an abort, the runs still going are of no use.
  stopRunning();
  progress.end();
}

PtxasPool::PtxasPool(const PtxasSettings &settings, PtxasReport &report)
    : state(std::make_unique<State>(settings, report)) {}

PtxasPool::~PtxasPool() {
  if (state->thread.joinable()) {
    {
      std::lock_guard<std::mutex> guard(state->mutex);
      state->abort = true;
    }
    state->wake.notify_all();
    state->thread.join();
  }
}

llvm::Error PtxasPool::start() {
  State &s = *state;
  if (!llvm::sys::fs::can_execute(s.settings.ptxas))
    return error(ptxasNotFound(s.settings.ptxas));
  s.start = Clock::now();
  if (llvm::Error err = s.scratch.create())
    return err;
  s.version = s.settings.cacheDir.empty() ? "" : ptxasVersion(s.settings.ptxas, s.scratch);
  s.thread = std::thread([&s] { s.run(); });
  return llvm::Error::success();
}

llvm::Error PtxasPool::add(PtxasJob job) {
  State &s = *state;
  std::lock_guard<std::mutex> guard(s.mutex);
  if (s.failure)
    return error(*s.failure);
  if (s.settings.memoryBudget && estimatePtxasBytes(job.instructions) > s.settings.memoryBudget) {
    s.report.failedJob = s.jobs.size();
    return error(overBudget(job, s.settings.memoryBudget));
  }
  // An object assembled before (an interrupted or repeated compile) is not queued.
  std::optional<std::string> cached;
  if (!s.settings.cacheDir.empty())
    cached = s.cache.lookupBytes(objectKey(job, s.settings, s.version));
  s.jobs.push_back(std::make_unique<PtxasJob>(std::move(job)));
  if (cached) {
    s.objects.push_back(std::move(*cached));
    ++s.report.cacheHits;
    ++s.done;
    return llvm::Error::success();
  }
  s.queued.push_back(s.jobs.size() - 1);
  s.pendingInstructions += s.jobs.back()->instructions;
  s.objects.emplace_back();
  s.wake.notify_all();
  return llvm::Error::success();
}

llvm::Expected<std::string> PtxasPool::finish() {
  State &s = *state;
  {
    std::lock_guard<std::mutex> guard(s.mutex);
    s.closed = true;
  }
  s.wake.notify_all();
  s.thread.join();
  if (s.failure)
    return error(*s.failure);

  // Link every object into one cubin.
  std::string nvlink = toolBeside(s.settings.ptxas, "nvlink");
  if (!llvm::sys::fs::can_execute(nvlink))
    return error("nvlink not found at '" + nvlink +
                 "' (next to ptxas): it links the separately assembled kernels");
  llvm::SmallVector<std::string> objectFiles;
  for (size_t i = 0; i < s.objects.size(); ++i) {
    objectFiles.push_back(s.scratch.file("link" + std::to_string(i) + ".o"));
    if (llvm::Error err = writeFile(objectFiles.back(), s.objects[i]))
      return std::move(err);
  }
  std::string cubinFile = s.scratch.file("linked.cubin"),
              logFile = s.scratch.file("nvlink.log");
  std::string arch = "-arch=" + s.settings.chip;
  llvm::SmallVector<StringRef> args{nvlink, arch};
  for (const std::string &f : objectFiles)
    args.push_back(f);
  args.append({"-o", cubinFile});
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile), StringRef(logFile)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(nvlink, args, std::nullopt, redirects, 0, 0, &execError);
  s.report.seconds += secondsSince(s.start);
  if (rc != 0)
    return error(describeFailure("nvlink", rc, execError, logFile));
  return readFile(cubinFile);
}

llvm::Expected<std::string> spconv::assembleAndLink(std::vector<PtxasJob> jobs,
                                                    const PtxasSettings &settings,
                                                    PtxasReport &report) {
  if (!llvm::sys::fs::can_execute(settings.ptxas))
    return error(ptxasNotFound(settings.ptxas));
  // Refuse before anything runs: a unit that cannot fit the budget alone would be killed.
  for (const PtxasJob &job : jobs)
    if (settings.memoryBudget && estimatePtxasBytes(job.instructions) > settings.memoryBudget)
      return error(overBudget(job, settings.memoryBudget));
  PtxasPool pool(settings, report);
  if (llvm::Error err = pool.start())
    return std::move(err);
  for (PtxasJob &job : jobs)
    if (llvm::Error err = pool.add(std::move(job)))
      return std::move(err);
  return pool.finish();
}
