//===- PtxAssembler.cpp - ptxas and nvlink, in parallel and in budget -----===//
#include "spconv/Target/PtxAssembler.h"
#include "spconv/Transforms/TemplateCache.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
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
  return llvm::formatv("ptxas-object v1|{0}|{1}|-O{2}|maxrreg{3}|{4:x16}{5:x16}|{6}", ptxasVersion,
                       s.chip, s.optLevel, job.maxRegisters, h.high64, h.low64, job.ptx.size())
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

uint64_t spconv::estimatePtxasBytes(int64_t instructions) {
  // ptxas 13.0 at -O3 on spconv's straight-line kernels: about 40 MB to start and 6 KB per
  // PTX instruction (docs/compile-time.md, "ptxas memory"), with a margin of 1.5x.
  constexpr uint64_t kBase = 64ull << 20, kPerInstruction = 9 << 10;
  return kBase + kPerInstruction * uint64_t(std::max<int64_t>(instructions, 0));
}

llvm::Expected<std::string> spconv::assembleModule(StringRef ptx, const PtxasSettings &settings,
                                                   PtxasReport &report) {
  if (!llvm::sys::fs::can_execute(settings.ptxas))
    return error("ptxas not found at '" + settings.ptxas +
                 "': install the CUDA toolkit or pass --ptxas-path (or set SPCONV_PTXAS / "
                 "CUDA_PATH)");
  ScratchDir scratch;
  if (llvm::Error err = scratch.create())
    return std::move(err);
  std::string ptxFile = scratch.file("module.ptx"), cubinFile = scratch.file("module.cubin"),
              logFile = scratch.file("ptxas.log");
  if (llvm::Error err = writeFile(ptxFile, ptx))
    return std::move(err);
  std::string arch = "-arch=" + settings.chip, opt = "-O" + settings.optLevel;
  StringRef args[] = {settings.ptxas, arch, opt, ptxFile, "-o", cubinFile};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile), StringRef(logFile)};
  std::string execError;
  auto start = Clock::now();
  int rc =
      llvm::sys::ExecuteAndWait(settings.ptxas, args, std::nullopt, redirects, 0, 0, &execError);
  report.seconds += secondsSince(start);
  ++report.assembled;
  if (rc != 0)
    return error(describeFailure("ptxas", rc, execError, logFile));
  return readFile(cubinFile);
}

llvm::Expected<std::string> spconv::assembleAndLink(llvm::ArrayRef<PtxasJob> jobs,
                                                    const PtxasSettings &settings,
                                                    PtxasReport &report) {
  if (!llvm::sys::fs::can_execute(settings.ptxas))
    return error("ptxas not found at '" + settings.ptxas +
                 "': install the CUDA toolkit or pass --ptxas-path (or set SPCONV_PTXAS / "
                 "CUDA_PATH)");
  auto start = Clock::now();
  ScratchDir scratch;
  if (llvm::Error err = scratch.create())
    return std::move(err);

  // Refuse before anything runs: a unit that cannot fit the budget alone would be killed.
  for (const PtxasJob &job : jobs)
    if (settings.memoryBudget && estimatePtxasBytes(job.instructions) > settings.memoryBudget)
      return error(llvm::formatv(
          "{0}: {1} PTX instructions would need about {2} MiB in ptxas, over the memory "
          "budget of {3} MiB (--ptxas-memory-budget); lower --code-budget or --block-k",
          job.label, job.instructions, estimatePtxasBytes(job.instructions) >> 20,
          settings.memoryBudget >> 20));

  TemplateCache cache(settings.cacheDir, "o");
  std::string version = settings.cacheDir.empty() ? "" : ptxasVersion(settings.ptxas, scratch);
  std::vector<std::string> objects(jobs.size());
  std::vector<size_t> pending;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!settings.cacheDir.empty())
      if (std::optional<std::string> obj =
              cache.lookupBytes(objectKey(jobs[i], settings, version))) {
        objects[i] = std::move(*obj);
        ++report.cacheHits;
        continue;
      }
    pending.push_back(i);
  }
  // Largest first: the long poles start early and small units fill the gaps.
  llvm::stable_sort(
      pending, [&](size_t a, size_t b) { return jobs[a].instructions > jobs[b].instructions; });

  struct Running {
    size_t job;
    llvm::sys::ProcessInfo process;
    Clock::time_point start;
    uint64_t estimate;
    std::string object, log;
  };
  std::vector<Running> running;
  uint64_t inUse = 0;
  size_t next = 0, done = report.cacheHits;
  unsigned maxJobs = std::max(1u, settings.jobs);
  // On an error, stop the ptxas processes still running before their files go.
  llvm::scope_exit killAll([&] {
    for (Running &r : running) {
      ::kill(r.process.Pid, SIGTERM);
      llvm::sys::Wait(r.process, /*SecondsToWait=*/std::nullopt);
      trackChild(r.process.Pid, /*add=*/false);
    }
  });
  std::string arch = "-arch=" + settings.chip, opt = "-O" + settings.optLevel;
  while (next < pending.size() || !running.empty()) {
    // Start what the job count and the memory budget allow (always at least one).
    while (next < pending.size() && running.size() < maxJobs) {
      const PtxasJob &job = jobs[pending[next]];
      uint64_t estimate = estimatePtxasBytes(job.instructions);
      if (!running.empty() && settings.memoryBudget && inUse + estimate > settings.memoryBudget)
        break;
      std::string stem = "unit" + std::to_string(pending[next]);
      std::string ptxFile = scratch.file(stem + ".ptx");
      Running r{pending[next],
                {},
                Clock::now(),
                estimate,
                scratch.file(stem + ".o"),
                scratch.file(stem + ".log")};
      if (llvm::Error err = writeFile(ptxFile, job.ptx))
        return std::move(err);
      std::string maxReg = "--maxrregcount=" + std::to_string(job.maxRegisters);
      llvm::SmallVector<StringRef> args{settings.ptxas, "-c", arch, opt};
      if (job.maxRegisters > 0)
        args.push_back(maxReg);
      args.append({ptxFile, "-o", r.object});
      std::optional<StringRef> redirects[] = {std::nullopt, StringRef(r.log), StringRef(r.log)};
      std::string execError;
      bool failed = false;
      r.process = llvm::sys::ExecuteNoWait(settings.ptxas, args, std::nullopt, redirects, 0,
                                           &execError, &failed);
      if (failed) {
        report.failedJob = pending[next];
        return error("cannot start ptxas: " + execError);
      }
      trackChild(r.process.Pid, /*add=*/true);
      inUse += estimate;
      report.peakEstimate = std::max(report.peakEstimate, inUse);
      running.push_back(std::move(r));
      ++next;
    }
    // Reap whatever finished; sleep briefly when nothing did.
    bool reaped = false;
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
      const PtxasJob &job = jobs[r.job];
      double took = secondsSince(r.start);
      if (status.ReturnCode != 0) {
        report.failedJob = r.job;
        return error(describeFailure("ptxas", status.ReturnCode, execError, r.log));
      }
      llvm::Expected<std::string> object = readFile(r.object);
      if (!object)
        return object.takeError();
      if (!settings.cacheDir.empty())
        if (std::optional<std::string> err =
                cache.storeBytes(objectKey(job, settings, version), *object))
          llvm::errs() << "spconv: warning: object cache: " << *err << "\n";
      objects[r.job] = std::move(*object);
      ++report.assembled;
      if (took > report.slowestSeconds) {
        report.slowestSeconds = took;
        report.slowestLabel = job.label;
      }
      inUse -= r.estimate;
      ++done;
      if (settings.progress)
        llvm::errs() << llvm::formatv("spconv: ptxas {0}/{1} units, {2:f1} s; slowest: {3} "
                                      "({4:f1} s)\n",
                                      done, jobs.size(), secondsSince(start), report.slowestLabel,
                                      report.slowestSeconds);
      running.erase(running.begin() + i);
    }
    if (!reaped && !running.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  killAll.release();

  // Link every object into one cubin.
  std::string nvlink = toolBeside(settings.ptxas, "nvlink");
  if (!llvm::sys::fs::can_execute(nvlink))
    return error("nvlink not found at '" + nvlink +
                 "' (next to ptxas): it links the separately assembled kernels");
  llvm::SmallVector<std::string> objectFiles;
  for (size_t i = 0; i < objects.size(); ++i) {
    objectFiles.push_back(scratch.file("link" + std::to_string(i) + ".o"));
    if (llvm::Error err = writeFile(objectFiles.back(), objects[i]))
      return std::move(err);
  }
  std::string cubinFile = scratch.file("linked.cubin"), logFile = scratch.file("nvlink.log");
  llvm::SmallVector<StringRef> args{nvlink, arch};
  for (const std::string &f : objectFiles)
    args.push_back(f);
  args.append({"-o", cubinFile});
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile), StringRef(logFile)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(nvlink, args, std::nullopt, redirects, 0, 0, &execError);
  report.seconds += secondsSince(start);
  if (rc != 0)
    return error(describeFailure("nvlink", rc, execError, logFile));
  return readFile(cubinFile);
}
