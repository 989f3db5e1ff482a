#include "predict/jobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string_view>

namespace mpior::predict {

namespace {

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

}  // namespace

int64_t paced_passes(int64_t file_bytes) {
  return std::clamp<int64_t>(kPacedVolume / std::max<int64_t>(1, file_bytes), 1, kMaxPacedPasses);
}

namespace {

struct Body {
  std::string text, section;
  int64_t space = 0;
  int64_t pace_ops = 0, pace_bs = 0;  // a paced job's traced writes per rank and their size
  int32_t pace_jobs = 0;
  int64_t pace_file_bytes = 0;  // a paced job's file: what every repetition of its work allocates again
  double sync_ranks = 1;
  int64_t ops = 0, traced_ops = 0, passes = 1;
  std::vector<std::string> meta_args;
};

std::string head() { return fmt::format("[global]\ndirectory=${{{}}}\ngroup_reporting\n", kDirVariable); }

// What a job does per rank: the class's traced calls (at most --max-volume's
// bytes or --max-meta-ops' calls), in passes repeating them to about
// `seconds` at the traced pace when one pass is shorter (a few milliseconds
// of work is the machine's noise as much as the file system's).
void size_work(Body& b, int64_t traced_ops, int64_t cap, double per_op_ns, double seconds) {
  b.traced_ops = std::max<int64_t>(traced_ops, 1);
  b.ops = cap > 0 ? std::min(b.traced_ops, cap) : b.traced_ops;
  double pass_ns = double(b.ops) * std::max(per_op_ns, 100.0);
  b.passes = std::clamp<int64_t>(std::llround(std::ceil(seconds * 1e9 / pass_ns)), 1, 1000);
}

std::string work_note(const Body& b, int64_t bs) {
  std::string s = fmt::format("# per rank and pass: {} calls{}, {} passes", b.ops,
                              bs ? fmt::format(" of {} ({})", size_text(bs), size_text(b.ops * bs)) : "", b.passes);
  if (b.ops < b.traced_ops) s += fmt::format("; capped: the program made {} calls a rank", b.traced_ops);
  return s + "\n";
}

// read/write/sync classes: psync I/O of the class's size, one fio job per
// rank that did it (on one file when the ranks shared one), moving the
// class's traced volume: write-back throttling and the page cache's limits
// are what a sample of it would miss (collective writes of 768 MiB a rank,
// sampled in one second over 256 MiB: ratio 1.57 ext4 -> tmpfs where the
// program ran 3x faster there). Sequential writes write fresh files (the
// program extended its files), unlinked after each pass, with the traced
// fsync cadence (fsync=N; fio issues a job's fsync before its next write, so
// one more write closes the pass: its last fsync is made and counted). Random
// writes, reads, and synced writes of a shared file cover the traced region
// (overwriting where the program overwrote: an fsync's cost depends on what
// is dirty) for the traced volume; a pass of writes is made on a new file.
// Sequential synced writes to a file per rank sync every `ranks_per_job` x
// the traced cadence: a fio job stands for that many ranks (the class's
// ranks over its concurrency), and at an fsync the page cache holds what all
// of them wrote since their last one; an fsync on a disk pays for that dirty
// volume (its write-back contends with the fsync's), which jobs at the
// traced cadence and the class's concurrency would not leave.
// Reads of files the program wrote (`cached`) keep the pages fio's layout left: fio drops a file's pages
// before reading it by default (invalidate=1), and on a disk its reads then wait for the device where the
// program's came from the page cache (mdtest's 4 KiB reads: 7 us each on ext4, fio's 30 times that).
Body data_body(const ClassKey& k, int64_t region, int32_t ranks, double per_op_ns, int64_t per_rank_ops,
               const JobOptions& opt, double ranks_per_job = 1, bool cached = false) {
  bool write = k.op != Op::read, synced = write && k.sync_every > 0;
  bool fresh = write && !k.random && !(synced && k.shared);
  int64_t bs = std::max<int64_t>(k.size, 1);
  Body b;
  size_work(b, per_rank_ops, opt.max_volume > 0 ? std::max<int64_t>(1, opt.max_volume / bs) : 0, per_op_ns,
            opt.seconds);
  // Several fio jobs on one file cannot each unlink it after a pass (the second unlink fails the run), so
  // their passes share one file: sequential writes extending it are made once, the program's volume (a
  // pass over the last one's file would rewrite its cached pages); rewrites of a region repeat over it.
  bool own_file = !k.shared || ranks <= 1;
  if (fresh && !own_file) b.passes = 1;
  int64_t cap = opt.max_volume > 0 ? round_up(opt.max_volume, bs) : round_up(kMaxRegion, bs);
  // A job of a shared file's rewrites stands for ranks_per_job ranks, each rewriting its own part of the file.
  double parts = write && !fresh && k.shared ? std::max(1.0, std::round(ranks_per_job)) : 1.0;
  int64_t size = fresh ? b.ops * bs + (synced ? bs : 0)
                       : std::clamp(round_up(int64_t(double(std::max(region, bs)) * parts), bs), bs, cap);
  b.section = k.op == Op::sync ? "sync" : write ? "write" : "read";
  b.text = head() + "[io]\nioengine=psync\n" + work_note(b, bs);
  b.text += fmt::format("rw={}{}\nbs={}\nsize={}\nnumjobs={}\n", k.random ? "rand" : "", write ? "write" : "read", bs,
                        size, ranks);
  if (write) b.text += "fallocate=none\n";
  if (!write && cached) b.text += "invalidate=0\n";
  // Each pass of a write job is the program's work again on a new file, unlinked after it: its first writes
  // allocate (a tmpfs page, an ext4 block), and a pass over the last pass's file would rewrite cached pages
  // the program wrote fresh (on ext4 near tmpfs's cost; a checkpoint rewritten 20 times allocated its block
  // once, not once per 7 passes).
  if (write) b.text += fmt::format("loops={}\n{}", b.passes, own_file ? "unlink_each_loop=1\n" : "");
  // Repetitions of a short pass end at twice `seconds` (fio's runtime without time_based: a limit, never
  // more work): each pass's files cost more than the traced calls say (846 passes of 40 4 KiB writes ran
  // 2.3 s for 0.2 s), and synced writes can take far longer than the traced pace says.
  if (b.passes > 1) b.text += fmt::format("runtime={}ms\n", std::max<int64_t>(1, std::llround(opt.seconds * 2000)));
  if (!fresh) b.text += fmt::format("io_size={}\n", b.ops * (write ? 1 : b.passes) * bs);
  // Random synced writes: offsets drawn without fio's map of the region's blocks, whose every pass over the
  // region ends with one more fsync (38 for 20 writes of a 1-block region with fsync=1); without it fio
  // syncs once per write, as the program did, and its own count is the syncs made.
  if (synced && k.random) b.text += "norandommap=1\n";
  if (synced && k.shared && ranks > 1 && !fresh) {
    b.pace_ops = b.ops;
    b.pace_bs = bs;
    b.pace_jobs = ranks;
    b.pace_file_bytes = size * ranks;
  }
  if (k.shared) b.text += fmt::format("filename=shared.dat\noffset_increment={}\n", size);
  // A capped pass keeps a sync at its end where the program synced less often (IOR's one fsync a file).
  int64_t every = k.sync_every;
  if (fresh && !k.shared && ranks_per_job > 1) every = std::llround(double(every) * ranks_per_job);
  if (synced && every != k.sync_every) b.sync_ranks = ranks_per_job;
  if (synced && every != k.sync_every)
    b.text += fmt::format(
        "# each job writes for {:.3g} ranks between its fsyncs (their dirty volume); a rank's fsync: {:.3g} of one\n",
        ranks_per_job, rank_sync_share(ranks_per_job));
  if (synced) b.text += fmt::format("{}={}\n", k.datasync ? "fdatasync" : "fsync", std::min(every, b.ops));
  b.space = size * ranks * (b.pace_ops ? paced_passes(size * ranks) : 1);
  return b;
}

double per_op_ns(const IoClass& c) { return c.count ? double(c.time_ns) / double(c.count) : 1e4; }

int64_t per_rank_ops(const IoClass& c) {
  return std::max<int64_t>(1, int64_t(c.count) / std::max<int64_t>(c.concurrency(), 1));
}

// The ranks one fio job of the class stands for (data_body's ranks_per_job).
double ranks_per_job(const IoClass& c) {
  return double(std::max<size_t>(1, c.ranks.size())) / double(std::max(1, c.concurrency()));
}

// create/open/close/stat/unlink/mkdir/rmdir/rename: mpior-predict-meta's
// workers (one per rank that did it), each making the rank's traced calls.
Body meta_body(const IoClass& c, const JobOptions& opt) {
  Body b;
  size_work(b, per_rank_ops(c), opt.max_meta_ops, per_op_ns(c), opt.seconds);
  b.section = std::string(op_name(c.key.op));
  b.meta_args = {b.section, std::to_string(c.concurrency()), std::to_string(b.ops), std::to_string(b.passes),
                 fmt::format("{:g}", opt.seconds)};
  // An unlink frees what its file holds (pages, and on a disk the blocks a sync allocated): its files get
  // the traced files' mean size, synced where the program's were, and closed after a truncation to zero
  // where the program's were (ext4 starts writing such a file back at its close, and the unlink waits for
  // that). A close of a file written since its open (after a truncation to zero where the program's was)
  // may flush those writes: each closes a descriptor that wrote the traced closes' mean bytes, to one file
  // for the workers where the ranks shared theirs (a close flushes all of the file's pages).
  int64_t file_bytes = c.key.op == Op::unlink && c.count ? c.removed_bytes / int64_t(c.count) : 0;
  if (may_flush(c.key) && c.count) file_bytes = std::max<int64_t>(1, c.bytes / int64_t(c.count));
  bool truncated = c.key.truncated || c.removed_flushed,
       shared = may_flush(c.key) && c.key.shared && c.concurrency() > 1;
  if (file_bytes > 0) b.meta_args.insert(b.meta_args.end(), {std::to_string(file_bytes), c.removed_synced ? "1" : "0"});
  if (file_bytes > 0 && (truncated || shared)) b.meta_args.push_back(truncated ? "1" : "0");
  if (file_bytes > 0 && shared) b.meta_args.push_back("1");
  b.text = "# run alone in an empty directory: the calls timed and their mean seconds per call\n" + work_note(b, 0) +
           fmt::format("{} {}\n", kMetaProgram, fmt::join(b.meta_args, " "));
  b.space = int64_t(c.concurrency()) * b.ops * std::max<int64_t>(4096, round_up(file_bytes, 4096));
  return b;
}

// The write class a sync class follows (same key but the op), or null.
const IoClass* write_of(const Classes& cs, const ClassKey& sync) {
  for (const IoClass& c : cs.classes)
    if (c.key.op == Op::write && c.key.size == sync.size && c.key.random == sync.random &&
        c.key.shared == sync.shared && c.key.sync_every == sync.sync_every && c.key.datasync == sync.datasync)
      return &c;
  return nullptr;
}

// The job of a data class; a sync class gets the job of the writes it
// follows, at their concurrency: the same text measures both.
Body data_job(const Classes& cs, const IoClass& c, const JobOptions& opt) {
  if (c.key.op != Op::sync)
    return data_body(c.key, c.region, c.concurrency(), per_op_ns(c), per_rank_ops(c), opt, ranks_per_job(c),
                     c.reads_written);
  const IoClass* w = write_of(cs, c.key);
  ClassKey k = c.key;
  k.op = Op::write;
  Body b = w ? data_body(w->key, w->region, w->concurrency(), per_op_ns(*w), per_rank_ops(*w), opt, ranks_per_job(*w))
             : data_body(k, k.size, c.concurrency(), 1e4, per_rank_ops(c) * k.sync_every, opt, ranks_per_job(c));
  b.section = "sync";
  return b;
}

// Why a class below min_share of the traced time is not measured (may_matter recognizes it).
std::string below_share(const JobOptions& opt) {
  return fmt::format("below {:g}% of the traced I/O time", opt.min_share * 100);
}

std::string why_not(const IoClass& c, const Classes& cs, const JobOptions& opt, size_t measured, bool forced) {
  if (c.key.op == Op::other) return "no benchmark for it (fio, mpior-predict-meta)";
  if (c.key.op == Op::mpiio_own)
    return "the ranks meeting inside MPI-IO: its waits for other ranks' file-system calls scaled";
  if (c.count == 0 || c.time_ns <= 0) return "no traced time";
  // fsync costs next to nothing on some file systems (tmpfs) and milliseconds
  // on others: a sync class matters however little time it took here, and so
  // do the writes it syncs, predicted with it by their cycle (on a busy
  // machine a checkpoint's fsyncs took 99% of the traced I/O, its writes
  // below 1%, and went unmeasured).
  // So does a close of a file written since its open, which may flush the writes (ext4 after a truncation
  // to zero: 0.1 s a close where tmpfs took 10 us).
  bool synced = (c.key.op == Op::sync || c.key.op == Op::write) && c.key.sync_every > 0;
  if (c.key.op != Op::sync && !synced && !may_flush(c.key) && !forced &&
      double(c.time_ns) < opt.min_share * double(cs.io_ns))
    return below_share(opt);
  if (measured >= opt.max_classes) return fmt::format("past the {} largest classes", opt.max_classes);
  return "";
}

}  // namespace

JobPlan plan_jobs(const Classes& cs, const JobOptions& opt) {
  JobPlan p;
  size_t n = cs.classes.size(), measured = 0;
  p.job_of.assign(n, -1);
  p.section.resize(n);
  p.unmeasured.resize(n);
  std::vector<std::string> bodies;
  // The classes forced last: the others' jobs keep the names and texts a plan without `force` gave them.
  std::vector<size_t> order;
  for (int forced = 0; forced < 2; ++forced)
    for (size_t i = 0; i < n; ++i)
      if ((i < opt.force.size() && opt.force[i]) == bool(forced)) order.push_back(i);
  for (size_t i : order) {
    const IoClass& c = cs.classes[i];
    p.unmeasured[i] = why_not(c, cs, opt, measured, i < opt.force.size() && opt.force[i]);
    if (!p.unmeasured[i].empty()) continue;
    ++measured;
    Body b = is_metadata(c.key.op) ? meta_body(c, opt) : data_job(cs, c, opt);
    auto at = std::find(bodies.begin(), bodies.end(), b.text);
    if (at == bodies.end()) {
      bodies.push_back(b.text);
      p.jobs.push_back({fmt::format("job-{}", bodies.size()),
                        "",
                        {},
                        b.pace_ops,
                        b.pace_bs,
                        b.pace_jobs,
                        b.ops,
                        b.traced_ops,
                        b.passes,
                        b.meta_args,
                        b.sync_ranks});
      p.jobs.back().pace_file_bytes = b.pace_file_bytes;
      at = bodies.end() - 1;
    }
    size_t j = size_t(at - bodies.begin());
    p.job_of[i] = int(j);
    p.section[i] = b.section;
    p.jobs[j].used.push_back(i);
    p.space = std::max(p.space, b.space);
  }
  for (size_t j = 0; j < p.jobs.size(); ++j) {
    std::string top = "# mpior-predict: measures\n";
    for (size_t i : p.jobs[j].used)
      top +=
          fmt::format("#   class {}: {} by {} ranks ({} {})\n", i + 1, class_label(cs.classes[i].key),
                      cs.classes[i].concurrency(), p.jobs[j].meta_args.empty() ? "fio section" : "calls", p.section[i]);
    if (p.jobs[j].meta_args.empty())
      top += fmt::format("# run alone: {}=/an/empty/directory fio --output-format=json {}.fio\n", kDirVariable,
                         p.jobs[j].name);
    p.jobs[j].text = top + bodies[j];
  }
  return p;
}

std::vector<bool> may_matter(const Classes& cs, const JobPlan& jp, const JobOptions& opt, double predicted_s,
                             double high_ratio) {
  std::vector<bool> force(cs.classes.size(), false);
  bool any = false;
  for (size_t i = 0; i < cs.classes.size() && i < jp.unmeasured.size(); ++i) {
    double most = double(cs.classes[i].time_ns) / 1e9 * std::max(1.0, high_ratio);
    force[i] = jp.unmeasured[i] == below_share(opt) && most >= opt.min_share * predicted_s;
    any = any || force[i];
  }
  return any ? force : std::vector<bool>{};
}

namespace {
// Replaces the value of the job file's line KEY=...; false when it has none.
bool replace_line(std::string& t, std::string_view key, const std::string& value) {
  size_t at = t.find("\n" + std::string(key) + "=");
  if (at == std::string::npos) return false;
  size_t end = t.find('\n', at + 1);
  t.replace(at + 2 + key.size(), end - at - 2 - key.size(), value);
  return true;
}
}  // namespace

double rank_sync_share(double ranks) { return ranks > 1 ? (ranks + 1) / (2 * ranks) : 1.0; }

int32_t fio_jobs(const Job& job) {
  size_t at = job.text.find("\nnumjobs=");
  if (!job.meta_args.empty() || job.pace_ops || at == std::string::npos) return 0;
  return int32_t(std::strtol(job.text.c_str() + at + 9, nullptr, 10));
}

std::string with_fio_jobs(const std::string& text, int32_t n) {
  std::string t = text;
  replace_line(t, "numjobs", std::to_string(n));
  return t;
}

namespace {
// The decision bounded_text and bounded_workers share: `n` jobs (workers) of
// which one alone slept `sleeps` times in `calls` calls on `side`, with
// `syncs` of its time in syncs. Records the sleeps per call, and the cores in
// job.bounded[side] when bounded.
bool bound(Job& job, int side, int32_t n, int64_t sleeps, double calls, double syncs, int32_t cores) {
  if (!(calls > 0) || side < 0 || side > 1) return false;
  job.sleeps_per_call[side] = double(sleeps) / calls;
  if (n <= cores || cores < 1 || job.sleeps_per_call[side] >= kCpuBoundSleeps) return false;
  if (syncs > kCpuBoundSyncShare) return false;
  job.bounded[side] = cores;
  return true;
}
}  // namespace

int32_t meta_workers(const Job& job) {
  return job.meta_args.size() > 1 ? int32_t(std::strtol(job.meta_args[1].c_str(), nullptr, 10)) : 0;
}

int32_t bounded_workers(Job& job, int side, int64_t sleeps, double calls, int32_t cores) {
  return bound(job, side, meta_workers(job), sleeps, calls, 0.0, cores) ? cores : 0;
}

std::vector<std::string> meta_args_on(const Job& job, int side) {
  std::vector<std::string> args = job.meta_args;
  if (args.size() > 1 && side >= 0 && side <= 1 && job.bounded[side] > 0) args[1] = std::to_string(job.bounded[side]);
  return args;
}

std::string bounded_text(Job& job, int side, int64_t sleeps, const nlohmann::json& out, int32_t cores) {
  int32_t n = fio_jobs(job);
  if (!bound(job, side, n, sleeps, calls_of(out), sync_share(out), cores)) return "";
  return fmt::format(
             "# bounded on the {}: one job's calls slept {:.3g} times a call there (CPU-bound), so the {} "
             "ranks take turns on {} cores\n",
             side ? "target" : "reference", job.sleeps_per_call[side], n, cores) +
         with_fio_jobs(job.text, cores);
}

namespace {
// Per section of fio's JSON (all jobs): calls and their time at the mean latency.
std::map<std::string, std::pair<double, double>> section_totals(const nlohmann::json& out) {
  std::map<std::string, std::pair<double, double>> t;
  if (out.is_object() && out.contains("jobs") && out["jobs"].is_array())
    for (const nlohmann::json& j : out["jobs"])
      for (const char* s : {"read", "write", "sync"})
        if (j.contains(s)) {
          double n = j[s].value("total_ios", 0.0);
          double mean = j[s].contains("lat_ns") ? j[s]["lat_ns"].value("mean", 0.0) : 0.0;
          t[s].first += n;
          t[s].second += n * mean;
        }
  return t;
}
}  // namespace

double calls_of(const nlohmann::json& out) {
  double n = 0;
  for (auto& [s, t] : section_totals(out)) n += t.first;
  return n;
}

double sync_share(const nlohmann::json& out) {
  double all = 0, sync = 0;
  for (auto& [s, t] : section_totals(out)) {
    all += t.second;
    if (s == "sync") sync += t.second;
  }
  return all > 0 ? sync / all : 0.0;
}

std::string paced_text(const Job& job, double cycle_s, double seconds, std::string_view where, double margin) {
  if (!job.pace_ops || !(cycle_s > 0)) return job.text;
  double period = margin * cycle_s;
  int64_t rate = std::max<int64_t>(1, std::llround(std::floor(1 / period)));
  int64_t reps = std::clamp<int64_t>(std::llround(std::ceil(seconds * double(rate) / double(job.pace_ops))), 1,
                                     paced_passes(job.pace_file_bytes));
  std::string t = job.text;
  if (!replace_line(t, "loops", "1")) return t;
  // The runtime limit must let a pass's paced writes through with their fsyncs (fio makes a job's fsync
  // before its next write): at one write a second, 1 s let a job make none, and the run measured no fsync.
  double need_ms = 1.5e3 * double(job.pace_ops + 1) / double(rate);
  size_t at = t.find("\nruntime=");
  if (at != std::string::npos && std::strtod(t.c_str() + at + 9, nullptr) < need_ms)
    replace_line(t, "runtime", fmt::format("{}ms", std::llround(std::ceil(need_ms))));
  t += fmt::format("rate_iops={}\n", rate);
  // Each repetition of the traced work is a group of its own on a new file, after the last one ended (as
  // a run of the program starts on a file it creates): its first writes allocate as the program's first
  // checkpoint did (a tmpfs page, an ext4 block), where loops over one file rewrite cached pages (a
  // checkpoint's first write is most of its I/O time on tmpfs). The jobs share each file, so none can
  // unlink it: the files stay until the run's directory is removed (at most kPacedVolume).
  size_t body = t.find("\n[io]\n");
  std::string pass = body == std::string::npos ? "" : t.substr(body + 6);
  for (int64_t k = 2; k <= reps && !pass.empty(); ++k) {
    std::string next = pass;
    replace_line(next.insert(0, "\n"), "filename", fmt::format("shared-{}.dat", k));
    t += fmt::format("[pass-{}]\nstonewall{}", k, next);
  }
  std::string note = fmt::format(
      "# paced for the {}: the ranks wrote and synced together (after a barrier); each job here writes every\n"
      "# {:.3g} ms, {:g} x the {:.3g} ms a write and its syncs took there: the jobs stay in step; {} passes\n",
      where, 1e3 / double(rate), margin, cycle_s * 1e3, reps);
  return t.insert(t.find("[global]"), note);
}

std::string one_pass_text(const Job& job, const std::string& text) {
  std::string t = text.substr(0, text.find("[pass-2]\n"));
  size_t at = t.find("\nruntime=");
  if (at != std::string::npos) t.erase(at + 1, t.find('\n', at + 1) - at);
  replace_line(t, "loops", "1");
  // One pass is the rank's traced calls, whatever repetitions the text asked for: a fraction of a pass can
  // end before the traced cadence's fsync (IOR's one fsync after 256 writes), so the retry measured none again.
  size_t io = t.find("\nio_size="), bs = t.find("\nbs=");
  if (io != std::string::npos && bs != std::string::npos) {
    int64_t block = std::strtoll(t.c_str() + bs + 4, nullptr, 10);
    replace_line(t, "io_size", fmt::format("{}", std::max<int64_t>(1, job.per_rank_ops * block)));
  }
  return "# one pass, no time limit: the limited run made no fsync\n" + t;
}

double cycle_seconds(const nlohmann::json& out, int32_t writers) {
  if (!out.is_object() || !out.contains("jobs") || !out["jobs"].is_array())
    throw std::runtime_error("fio's output has no \"jobs\" list");
  double n_writers = std::max(1.0, double(writers));
  double busy_ns = 0, writes = 0, last = 2 * n_writers / (n_writers + 1);
  for (const nlohmann::json& j : out["jobs"])
    for (const char* s : {"write", "sync"}) {
      if (!j.contains(s)) continue;
      double n = j[s].value("total_ios", 0.0);
      double mean = j[s].contains("lat_ns") ? j[s]["lat_ns"].value("mean", 0.0) : 0.0;
      bool write = std::string_view(s) == "write";
      busy_ns += n * mean * (write ? last : 1.0);
      if (write) writes += n;
    }
  return writes > 0 ? busy_ns / writes / 1e9 : 0.0;
}

namespace {

// fio's median completion latency of a section (clat_ns percentile 50, on by default), 0 when absent.
double median_ns(const nlohmann::json& sec) {
  if (!sec.contains("clat_ns") || !sec["clat_ns"].contains("percentile")) return 0.0;
  const nlohmann::json& pct = sec["clat_ns"]["percentile"];
  auto at = pct.find("50.000000");
  return at != pct.end() && at->is_number() ? at->get<double>() : 0.0;
}

double mean_ns(const nlohmann::json& sec) {
  double mean = sec.contains("lat_ns") ? sec["lat_ns"].value("mean", 0.0) : 0.0;
  if (mean <= 0 && sec.contains("clat_ns")) mean = sec["clat_ns"].value("mean", 0.0);
  return mean;
}

}  // namespace

std::map<std::string, double> per_op_seconds(const nlohmann::json& out, int64_t sync_every, bool means) {
  if (!out.is_object() || !out.contains("jobs") || !out["jobs"].is_array())
    throw std::runtime_error("fio's output has no \"jobs\" list");
  std::map<std::string, double> total_ns, ios;
  for (const nlohmann::json& j : out["jobs"])
    for (const char* s : {"read", "write", "sync"}) {
      if (!j.contains(s)) continue;
      const nlohmann::json& sec = j[s];
      bool sync = std::string_view(s) == "sync";
      double n = sec.value("total_ios", 0.0), median = sync || means ? 0.0 : median_ns(sec);
      double per_op = median > 0 ? median : mean_ns(sec);
      if (n <= 0 || per_op <= 0) continue;
      total_ns[s] += per_op * n;
      // fio counts an extra, next to free sync at each pass over the file (38 for 20 writes with fsync=1):
      // a sync's cost is the syncs' time over the syncs the cadence asked for.
      double writes = j.contains("write") ? j["write"].value("total_ios", 0.0) : 0.0;
      ios[s] += sync && sync_every > 0 && writes > 0 ? std::max(1.0, std::floor(writes / double(sync_every))) : n;
    }
  std::map<std::string, double> per_op;
  for (auto& [s, t] : total_ns) per_op[s] = t / ios[s] / 1e9;
  return per_op;
}

}  // namespace mpior::predict
