// fio job files for the classes that carry the traced I/O time, and what a
// fio run measured (issue 17).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "predict/op_classes.hpp"

namespace mpior::predict {

struct JobOptions {
  double seconds = 1.0;      // a job whose traced work is shorter repeats it (passes) to about this long
  double min_share = 0.01;   // classes below this share of the traced I/O time are not measured
  size_t max_classes = 12;   // measure at most this many classes (the largest)
  int64_t max_volume = 0;    // bytes a rank moves in one pass of a data job (0: the class's traced volume)
  int64_t max_meta_ops = 0;  // calls a rank makes in one pass of a metadata job (0: the class's traced count)
  // Per class: measured however small its share of the traced time (may_matter: it may carry min_share of the
  // prediction); their jobs come after the others', whose names and texts stay as without it.
  std::vector<bool> force = {};
};

struct Job {
  std::string name;          // "job-1"; the file is NAME.fio
  std::string text;          // the whole job file
  std::vector<size_t> used;  // classes it measures
  // Paced (synced writes of several ranks to one shared file, which the ranks
  // did together): the traced writes per rank and their size; 0 not paced.
  int64_t pace_ops = 0, pace_bs = 0;
  int32_t pace_jobs = 0;  // a paced job's fio jobs (the ranks), whose writes to the one file serialize
  // What one pass of it moves per rank against the class's traced work (the report's "volume").
  int64_t per_rank_ops = 0, traced_per_rank_ops = 0, passes = 1;
  // A metadata job: mpior-predict-meta's arguments (op, workers, calls per worker and pass, passes); else empty.
  std::vector<std::string> meta_args;
  // Synced writes of a file per rank: the ranks a fio job syncs for (data_body), whose fsyncs its one
  // fsync's time stands for (rank_sync_share); 1 otherwise.
  double sync_ranks = 1;
  // Bounded by the cores (bound_by_cores): the fio jobs (a metadata job's workers) run on the reference [0]
  // and the target [1] when a job's calls did not sleep there, 0 where unbounded; sleeps per call measured
  // there (-1 not probed).
  int32_t bounded[2] = {0, 0};
  double sleeps_per_call[2] = {-1, -1};
  int64_t pace_file_bytes = 0;  // a paced job's shared file: each repetition of the work writes a new one
  std::string file() const { return name + (meta_args.empty() ? ".fio" : ".meta"); }
};

struct JobPlan {
  std::vector<Job> jobs;
  std::vector<int> job_of;              // per class: index into jobs, -1 not measured
  std::vector<std::string> section;     // per class: the fio JSON section holding its operation
  std::vector<std::string> unmeasured;  // per class: why not measured ("" when measured)
  int64_t space = 0;                    // bytes the largest job needs in its directory
};

// A paced job's period over its cycle in step: room for a slow cycle without
// leaving the step, and no long idle gaps the program did not have.
inline constexpr double kPaceMargin = 1.25;
// The period of the run that measures the cycle in step, over the unpaced
// cycle: unpaced fsyncs find less dirty and cost less (several times less on
// ext4), so a period from the unpaced cycle with a small margin leaves the
// step again.
inline constexpr double kCalibrationMargin = 4;

// A paced job repeats the traced work in at most this many passes, each on a new file the jobs share
// (paced_text), and keeps their files until its run ends: at most kPacedVolume of them, at least one pass.
inline constexpr int64_t kMaxPacedPasses = 50;
inline constexpr int64_t kPacedVolume = int64_t(1) << 30;
int64_t paced_passes(int64_t file_bytes);

// Largest footprint a random or read job's file gets when the traced region is larger.
inline constexpr int64_t kMaxRegion = int64_t(4) << 30;

// The metadata benchmark beside mpior-predict (meta_main.cpp).
inline constexpr const char* kMetaProgram = "mpior-predict-meta";

// The environment variable the job files take their directory from.
inline constexpr const char* kDirVariable = "MPIOR_FIO_DIR";

JobPlan plan_jobs(const Classes& classes, const JobOptions& opt);

// Classes left out for their small share of the traced time that may carry `min_share` of the predicted
// time (`predicted_s`) all the same: at the largest of 1 and the measured ratios (`high_ratio`, the bound
// an unmeasured class's interval takes). A class far slower on the reference than the others (rmdir on
// ext4, 96% of mdtest's time there) makes the others' share small; on the target they are most of it,
// and the measured class's ratio does not say theirs. Empty when none.
std::vector<bool> may_matter(const Classes& classes, const JobPlan& jp, const JobOptions& opt, double predicted_s,
                             double high_ratio);

// A call that sleeps less often than this (voluntary context switches per
// call, the run's own included) runs on a CPU from start to end: buffered
// writes to tmpfs or into the page cache, unlike an fsync or a throttled write.
inline constexpr double kCpuBoundSleeps = 0.1;
// A job whose syncs take more than this share of its calls' time waits for a
// device, however rarely it sleeps (one fsync of 64 writes: 0.08 sleeps a
// call on ext4, 93% of the time in the fsync).
inline constexpr double kCpuBoundSyncShare = 0.5;

// Of the time of one fsync flushing what `ranks` ranks wrote, the part one
// rank's fsync takes on average: ranks syncing their own files queue on the
// device, the first waiting for its own writes, the last for all of theirs,
// so their mean is (ranks + 1) / 2 of one rank's writes, (ranks + 1) / (2 ranks)
// of the whole.
double rank_sync_share(double ranks);

// The fio jobs (numjobs) of a data job that is not paced; 0 for metadata
// and paced jobs, whose jobs must meet as the ranks did.
int32_t fio_jobs(const Job& job);

// The job's text with `n` fio jobs, each doing what one did.
std::string with_fio_jobs(const std::string& text, int32_t n);

// The text `side` (0 reference, 1 target) runs when one fio job of `job`
// alone slept `sleeps` times in the calls of `fio_output` there (its syncs
// under kCpuBoundSyncShare of their time): more fio jobs than
// `cores` whose calls do not sleep cannot make their calls at once, so the
// ranks take turns on the cores, and fio runs as many jobs as cores (job.bounded
// set); "" otherwise (the job as it is). Records the sleeps per call.
std::string bounded_text(Job& job, int side, int64_t sleeps, const nlohmann::json& fio_output, int32_t cores);

// A metadata job's workers (mpior-predict-meta's), 0 for a data job.
int32_t meta_workers(const Job& job);

// As bounded_text for a metadata job whose one worker alone slept `sleeps`
// times in `calls` calls on `side`: creates, stats and unlinks in a page-cache
// directory run on a CPU from start to end as buffered writes do, so more
// workers than cores measured each call waiting for a CPU; the workers it
// runs there (cores, job.bounded set), 0 for unchanged.
int32_t bounded_workers(Job& job, int side, int64_t sleeps, double calls, int32_t cores);

// mpior-predict-meta's arguments on `side` (0 reference, 1 target): bounded workers where bounded_workers said.
std::vector<std::string> meta_args_on(const Job& job, int side);

// The calls fio's JSON output counts (reads, writes and syncs of all jobs),
// and the share of their time (means) in syncs.
double calls_of(const nlohmann::json& fio_output);
double sync_share(const nlohmann::json& fio_output);

// A paced job's text: fio's jobs do not meet at barriers as the ranks did, so
// unpaced they drift apart and each fsync finds only its own job's writes
// dirty (fio's fsyncs 0.5-0.8x the program's on ext4). rate_iops at `margin`
// x the cycle (`cycle_s`: a write and its syncs in the directory `where`
// names: each runs at its own pace, as the program would) makes every job
// write at the same instants; whole repetitions of the traced work to about
// `seconds` (at most paced_passes), each a group of jobs on a new file after
// the last one ended (`[pass-K]`, `stonewall`), as a run of the program
// starts on a new file. Unpaced jobs unchanged.
std::string paced_text(const Job& job, double cycle_s, double seconds, std::string_view where,
                       double margin = kPaceMargin);

// A job's text (`text`: as run, perhaps paced) for one pass of its work with no runtime limit: a target
// much slower than the reference (tmpfs -> ext4 under load) can spend the limit before a job's first
// fsync (fio makes it before the next write), and the run then measures none.
std::string one_pass_text(const Job& job, const std::string& text);

// Seconds the slowest of `writers` jobs on one file spent per write in its
// writes and syncs (fio's JSON, group_reporting: the jobs' mean). Their writes
// serialize on the file's lock: in step a write waits for (writers - 1) / 2
// others on average and the last one for writers - 1, so its writes take
// 2 writers / (writers + 1) x the mean. A period from the mean alone let the
// last job's writes run into the next period (tmpfs, 2 ranks of 2 MiB: fio's
// writes back to back at 3x the time of writes in step, +99% ext4 -> tmpfs).
double cycle_seconds(const nlohmann::json& fio_output, int32_t writers = 1);

// Time per operation (seconds) by section ("read", "write", "sync") of fio's
// --output-format=json output, over all its jobs (weighted by their
// operations). Reads and writes: the median completion latency (clat 50th
// percentile; the mean without percentiles): on a busy machine a few writes
// preempted for milliseconds moved a run's mean by 45% (2 MiB writes), not its
// median. Syncs: the mean, and with sync_every > 0 the sync time over the
// writes / sync_every syncs asked for (not fio's count, which has one more per
// pass over the file). With `means`, reads and writes by their mean too: a
// run's mean moves with the machine's bursts as the application's one traced
// run did, so the runs' spread of means is the run-to-run spread. Throws
// std::runtime_error when the output is not fio's JSON.
std::map<std::string, double> per_op_seconds(const nlohmann::json& fio_output, int64_t sync_every = 0,
                                             bool means = false);

}  // namespace mpior::predict
