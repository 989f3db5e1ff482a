// I/O operation classes of a plan (issue 17): the traced I/O time split by
// what a file-system benchmark can repeat — operation, transfer-size bucket,
// sequential or random, file per process or shared, sync cadence — with the
// traced count and time and how many ranks did it.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model.hpp"

namespace mpior::predict {

// mpiio_own: an MPI-IO call's time beyond the file-system calls it made (the
// ranks meeting inside a collective, ROMIO's exchanges, waits for a CPU): in
// part waiting for the other ranks' file-system calls in the same collective,
// which scales as their class does (predict.cpp).
enum class Op : uint8_t {
  read,
  write,
  create,
  open,
  close,
  sync,
  stat,
  unlink,
  mkdir,
  rmdir,
  rename,
  other,
  mpiio_own
};
// create, open, close, stat, unlink, mkdir, rmdir, rename: measured by mpior-predict-meta.
bool is_metadata(Op op);
std::string_view op_name(Op op);

struct ClassKey {
  Op op = Op::other;
  // read/write: power of two >= the bytes asked; sync: of the file's writes; close: of the bytes the rank
  // wrote to the file since it opened it (what the close may flush), 0 none; else 0
  int64_t size = 0;
  bool random = false;     // most of the rank's accesses to the file did not start where the previous one ended
  bool shared = false;     // the file is used by more than one rank
  int64_t sync_every = 0;  // write/sync: the rank's writes to the file per fsync (rounded), 0 never synced
  bool datasync = false;   // write/sync: the file was synced with fdatasync
  // close: the file was truncated to zero length since the rank opened it, before those writes: a file
  // system may flush such a file at its close (ext4's auto_da_alloc: 256 MiB took 0.13 s there)
  bool truncated = false;
  auto operator<=>(const ClassKey&) const = default;
};

struct IoClass {
  ClassKey key;
  uint64_t count = 0;
  int64_t time_ns = 0;
  int64_t bytes = 0;            // read/write: the bytes moved; close: the bytes written since the opens it closed
  int64_t region = 0;           // read/write: the largest extent one rank covered in one file
  std::set<int32_t> ranks;      // ranks that ever did it
  std::set<std::string> kinds;  // the functions it stands for
  // With several traced runs (combine_runs): the class's time in each, in the
  // order given (0 where a run did not do it); count and time_ns are their medians.
  std::vector<int64_t> traced_runs_ns;
  // mpiio_own: its time by the class of the MPI-IO calls it was spent in, and
  // of that the time a rank waited in a collective call for the slowest other
  // rank's file-system calls in it (their time beyond its own). Several
  // traced runs (combine_runs): their sums, whose proportions count.
  std::map<ClassKey, int64_t> within, waiting;
  // Ranks in the class at once on the trace's aligned clocks: at the busiest
  // instant, and on average as its calls saw it (the mean over the class's
  // time of how many ranks were in it); 0 when not known.
  int32_t peak = 0;
  double at_once = 0;
  // An extrapolated plan's: at_once fitted to the traced runs' (fit_at_once); 0 when not fitted.
  double fitted_at_once = 0;
  // unlink: the bytes its calls removed (each file's extent the trace wrote, all ranks'), and whether any
  // of those files was synced before (an fsync on a disk leaves blocks for the unlink to free).
  int64_t removed_bytes = 0;
  bool removed_synced = false;
  // unlink: one of those files was closed after writes that followed a truncation to zero (ClassKey::
  // truncated): its close may have started writing it back (ext4), and an unlink then waits for that.
  bool removed_flushed = false;
  // read: some of its reads were of files the rank wrote too (mdtest's files, a checkpoint read back): the
  // program read them from the page cache.
  bool reads_written = false;
  // The fio job's numjobs: the ranks a call of it typically ran beside
  // (at_once, rounded), not every rank that ever did it (a class the ranks
  // did one after the other contends as one).
  int32_t concurrency() const;
};

struct Classes {
  std::vector<IoClass> classes;     // by traced time, largest first
  int64_t io_ns = 0;                // on summary.json's time.io_s basis: depth-0 I/O and MPI-IO calls, all ranks
  std::vector<int64_t> io_runs_ns;  // with several traced runs: each one's io_ns (io_ns: their median)
  // Made by mpior-post --extrapolate: its call times are fitted to the traced counts' (a few small ones),
  // not measured at this count, where many more ranks contend (predict.cpp: the target's time per op).
  bool extrapolated = false;
  std::vector<std::string> fitted_from;  // the traced runs fit_at_once fitted its ranks at once to, as named
};

// Walks every rank of every stream twice with the EventCursor (the files'
// access patterns first, then the classes). An MPI-IO call that made
// file-system calls counts their time in its class, the rest in mpiio_own.
Classes derive_classes(const trace::Plan& plan);

// Several traced runs of one program at one scale as one: the union of their
// classes, each with its time in every run and the median time and count
// (one traced run is one draw of the reference's run-to-run variation: the
// median of several is the typical run the prediction scales). Index of the
// run whose io_ns is the median in `median_run`.
Classes combine_runs(const std::vector<Classes>& runs, size_t* median_run = nullptr);

// An extrapolated plan's ranks at once are not measured: its fitted clocks
// start every rank of a class together. Each class found in two or more of
// the traced runs it was made from (`traced`: each run's rank count and
// classes) takes the least-squares line of their at_once against their rank
// count at the plan's `ranks`, between 1 and the ranks that did it
// (IoClass::fitted_at_once); the others keep the plan's.
void fit_at_once(Classes& plan, int32_t ranks, const std::vector<std::pair<int32_t, Classes>>& traced);

// "write 512KiB random shared fsync/1", for reports.
std::string class_label(const ClassKey& k);
std::string size_text(int64_t bytes);

// A close of bytes the rank wrote since its open or its last sync: it may flush them (ext4 after a
// truncation to zero), so it is measured whatever its share.
bool may_flush(const ClassKey& k);

}  // namespace mpior::predict
