// mpior-post DIR [-o PLAN] [--verify] [--partial] [--timeline FILE] [--html FILE] [--quiet]
// mpior-post --extrapolate N [--strict] -o PLAN DIR DIR DIR...
// mpior-post --compare PLAN_A PLAN_B
// mpior-post --dump FILE
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <new>
#include <set>
#include <sstream>

#include "extrap/extrapolate.hpp"
#include "postproc/aggregators.hpp"
#include "postproc/compare.hpp"
#include "postproc/dump.hpp"
#include "postproc/placement.hpp"
#include "postproc/plan.hpp"
#include "postproc/plan_summary.hpp"
#include "postproc/post.hpp"
#include "postproc/post_html.hpp"
#include "postproc/post_progress.hpp"
#include "postproc/post_timeline.hpp"
#include "postproc/traced_hints.hpp"
#include "report/progress.hpp"
#include "report/timeline_writer.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace {

constexpr int kUsageError = 2;

struct Options {
  std::vector<std::string> dirs;
  std::string plan, dump;
  std::vector<std::string> compare;
  bool events_only = false;
  int64_t extrapolate = 0;
  int64_t cb_buffer_size = mpior::extrap::Options{}.cb_buffer_size;
  bool cb_buffer_size_given = false;  // else a plan traced under OMPIO takes its own default
  int cb_nodes = 0;
  std::string cb_config_list;  // empty: *:1 when the ranks span nodes, else *:*
  int64_t striping_unit = 0;
  int striping_factor = 0;                  // 0: not Lustre
  mpior::postproc::CollectiveHints lustre;  // its romio_lustre_* hints alone
  std::string lustre_ds_in_coll = "enable";
  std::string ompio_fcoll = "automatic";  // a job traced under OMPIO: its collective component
  int64_t min_fdomain_size = 0;
  std::string cb_read = "automatic", cb_write = "automatic";
  // ROMIO's sieving hints; empty or 0: not given (independent calls as traced).
  std::string ds_read, ds_write;
  int64_t ind_rd_buffer_size = 0, ind_wr_buffer_size = 0;
  bool strict = false;
  bool verify = false;
  bool partial = false;
  std::string timeline, html;
  uint64_t max_events = mpior::report::TimelineWriter::kDefaultMaxEvents;
  bool quiet = false;
  // The parser whose options write into this object: the traced MPI-IO
  // hints are given to the options the user did not give.
  CLI::App* cli = nullptr;
};

std::string plan_file_of(const std::string& p) {
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return (std::filesystem::path(p) / mpior::trace::kPlanFileName).string();
  return p;
}

// ROMIO's default cb_config_list (*:1) when the plan's ranks name more
// than one node; a plan on one host stands for a run whose placement is
// not known, and there the first ranks aggregate (*:*).
mpior::postproc::CollectiveHints hints_of(const Options& o) {
  using mpior::postproc::parse_cb_mode;
  return {o.cb_nodes,
          o.cb_buffer_size,
          o.cb_config_list,
          o.striping_unit,
          o.min_fdomain_size,
          parse_cb_mode(o.cb_read, "romio_cb_read"),
          parse_cb_mode(o.cb_write, "romio_cb_write"),
          o.striping_factor,
          o.lustre.lustre_co_ratio,
          o.lustre.lustre_coll_threshold,
          o.lustre_ds_in_coll == "enable"};
}

bool sieve_given(const Options& o) {
  return !o.ds_read.empty() || !o.ds_write.empty() || o.ind_rd_buffer_size > 0 || o.ind_wr_buffer_size > 0;
}

// ROMIO's defaults for the sieving hints not given.
mpior::postproc::SieveHints sieve_of(const Options& o) {
  using mpior::postproc::parse_cb_mode;
  mpior::postproc::SieveHints h;
  if (!o.ds_read.empty()) h.ds_read = parse_cb_mode(o.ds_read, "romio_ds_read");
  if (!o.ds_write.empty()) h.ds_write = parse_cb_mode(o.ds_write, "romio_ds_write");
  if (o.ind_rd_buffer_size > 0) h.ind_rd_buffer_size = o.ind_rd_buffer_size;
  if (o.ind_wr_buffer_size > 0) h.ind_wr_buffer_size = o.ind_wr_buffer_size;
  return h;
}

// `dropped`: the extrapolation left out the transfers OMPIO made inside
// collective calls (extrap/collective_io.hpp), dealt here at the target
// with OMPIO's own count unless --cb-nodes forces one.
void redeal(mpior::trace::Plan& plan, const Options& o, const mpior::extrap::CollectiveIo& dropped) {
  using namespace mpior;
  postproc::MpiioHints hints;
  if (sieve_given(o)) hints.sieve = sieve_of(o);
  if (o.cb_nodes > 0 || dropped.dropped) {
    postproc::CollectiveHints h = hints_of(o);
    if (o.cb_nodes <= 0) h.cb_nodes = -1;
    if (h.cb_config_list.empty()) {
      bool one_host = std::all_of(plan.ranks.begin(), plan.ranks.end(),
                                  [&](const trace::PlanRank& r) { return r.host == plan.ranks.front().host; });
      h.cb_config_list = one_host ? "*:*" : "*:1";
    }
    hints.collective = h;
  }
  // A job traced under Open MPI's OMPIO: its rules, its buffer by default.
  hints.ompio = plan.job.mpi_io == "ompio";
  if (hints.ompio && hints.collective && !o.cb_buffer_size_given)
    hints.collective->cb_buffer_size = postproc::OmpioHints{}.bytes_per_agg;
  hints.ompio_fcoll = postproc::parse_ompio_fcoll(o.ompio_fcoll);
  if (dropped.dropped) hints.requests_only = postproc::RequestRate{dropped.write_ns_per_byte, dropped.read_ns_per_byte};
  postproc::Redealt got = postproc::redeal_mpiio(plan, hints);
  if (o.cb_nodes > 0 && got.calls == 0)
    std::cerr << "mpior-post: warning: --cb-nodes: no collective MPI-IO read or write made POSIX transfers\n";
  if (hints.sieve && got.strided == 0)
    std::cerr << "mpior-post: warning: --romio-ds-*/--ind-*-buffer-size: no independent MPI-IO read or write "
                 "through a non-contiguous view\n";
}

// The extrapolated ranks' hosts, continuing the traced runs' placement
// (postproc/placement.hpp); left as extrapolated when no pattern fits.
void place_hosts(mpior::trace::Plan& plan, const std::vector<std::vector<std::string>>& hosts) {
  using namespace mpior::postproc;
  Placement p = find_placement(hosts);
  if (p.kind == Placement::Kind::unknown || p.kind == Placement::Kind::one_host) return;
  std::vector<std::string> placed = place_ranks(p, hosts, int64_t(plan.ranks.size()));
  for (size_t r = 0; r < placed.size(); ++r) plan.ranks[r].host = placed[r];
  plan.extrap.notes.push_back({-1, -1, -1, "hosts",
                               fmt::format("{} ({} {}), {} nodes", placement_name(p.kind), p.size,
                                           p.kind == Placement::Kind::per_node ? "ranks a node" : "nodes",
                                           std::set<std::string>(placed.begin(), placed.end()).size()),
                               "placement"});
}

// When the inputs are refused but do without the one of fewest ranks, says
// so: a program often runs otherwise at its smallest count (at 2 ranks a
// ring's two neighbours are one rank), and the user decides whether that
// count is outside the behaviour to extrapolate. Empty otherwise.
std::string without_smallest(const Options& o, const std::vector<int64_t>& counts) {
  using namespace mpior;
  if (counts.size() < 4) return "";
  size_t smallest = size_t(std::min_element(counts.begin(), counts.end()) - counts.begin());
  std::vector<extrap::Input> rest;
  for (size_t i = 0; i < o.dirs.size(); ++i)
    if (i != smallest) rest.push_back({o.dirs[i], postproc::plan_of_dir(o.dirs[i]), counts[i]});
  try {
    std::vector<std::string> ignored;
    extrap::extrapolate(std::move(rest), o.extrapolate, {o.cb_buffer_size, o.strict}, &ignored);
  } catch (const ToolError&) {
    return "";
  }
  return fmt::format(
      "\n  Without {} ({} ranks) the other inputs extrapolate: the program behaves otherwise at {} ranks. Leave it "
      "out if that count is not the behaviour to extrapolate.",
      o.dirs[smallest], counts[smallest], counts[smallest]);
}

// ", N quantities approximated" when some took a best fit, else "".
std::string approximated_text(const mpior::trace::Plan& plan) {
  auto n = std::count_if(plan.extrap.notes.begin(), plan.extrap.notes.end(),
                         [](const mpior::trace::ExtrapNote& e) { return e.name == mpior::trace::kApproximateModel; });
  return n == 0 ? "" : fmt::format(", {} quantities approximated", n);
}

// OMPIO's fcoll components modelled (postproc/ompio_layout.hpp), as `--mca
// fcoll NAME` spells them.
const std::vector<std::string> kOmpioComponents = {"individual", "vulcan", "dynamic", "dynamic_gen2", "two_phase"};

std::vector<std::string> ompio_fcoll_choices() {
  std::vector<std::string> out{"automatic"};
  out.insert(out.end(), kOmpioComponents.begin(), kOmpioComponents.end());
  return out;
}

// The traced value of an option the user did not give, run through the
// option's own checks; a value they refuse is left out with a warning.
bool give_option(CLI::Option* opt, const std::string& key, const std::string& value) {
  opt->add_result(value);
  try {
    opt->run_callback();
    return true;
  } catch (const CLI::Error& e) {
    opt->clear();
    std::cerr << "mpior-post: warning: traced MPI-IO hint " << key << "=" << value << " not taken: " << e.what()
              << "\n";
    return false;
  }
}

// The hints the inputs were traced with become the defaults of the options
// the user did not give (postproc/traced_hints.hpp); returns what was taken
// and what the user's options overrode, as notes for the plan.
std::vector<mpior::trace::ExtrapNote> take_traced_hints(Options& o, const std::vector<mpior::extrap::Input>& inputs) {
  using namespace mpior;
  std::vector<const trace::JobInfo*> jobs;
  for (const extrap::Input& in : inputs) jobs.push_back(&in.plan.job);
  postproc::TracedHints t = postproc::traced_hints(jobs);
  std::vector<trace::ExtrapNote> notes;
  for (const postproc::TracedHint& h : t.taken) {
    CLI::Option* opt = o.cli ? o.cli->get_option_no_throw(postproc::hint_option(h.key)) : nullptr;
    if (!opt) continue;
    if (opt->count() > 0) {
      notes.push_back(postproc::hint_note(h.key, opt->results().front(),
                                          fmt::format("{} given, traced {}", opt->get_name(), h.value)));
    } else if (give_option(opt, h.key, h.value)) {
      if (h.key == "cb_buffer_size") o.cb_buffer_size_given = true;
      notes.push_back(postproc::hint_note(h.key, h.value, "traced"));
    }
  }
  for (const std::string& key : t.differing)
    std::cerr << "mpior-post: warning: MPI-IO hint " << key << " was given other values for other files or runs: "
              << "the library's default is modelled unless " << postproc::hint_option(key) << " is given\n";
  if (!t.fcoll.empty()) {
    if (o.ompio_fcoll != "automatic") {
      notes.push_back(postproc::hint_note("fcoll", o.ompio_fcoll, "--ompio-fcoll given, traced " + t.fcoll));
    } else if (std::find(kOmpioComponents.begin(), kOmpioComponents.end(), t.fcoll) != kOmpioComponents.end()) {
      o.ompio_fcoll = t.fcoll;
      notes.push_back(postproc::hint_note("fcoll", t.fcoll, "traced"));
    } else {
      std::cerr << "mpior-post: warning: the job ran OMPIO's fcoll component " << t.fcoll
                << ", which is not modelled: OMPIO's automatic choice is\n";
    }
  }
  return notes;
}

std::string notes_text(const std::vector<mpior::trace::ExtrapNote>& notes) {
  std::string out;
  for (const mpior::trace::ExtrapNote& n : notes)
    out += fmt::format("{}{}={} ({})", out.empty() ? "" : ", ", n.what.substr(5), n.model, n.name);
  return out;
}

int extrapolate(Options& o) {
  using namespace mpior;
  std::vector<extrap::Input> inputs;
  std::vector<std::vector<std::string>> hosts;  // per input, rank by rank
  std::vector<int64_t> counts;                  // per input, its ranks
  for (const std::string& d : o.dirs) {
    trace::Plan p = postproc::plan_of_dir(d);
    int64_t n = int64_t(p.ranks.size());
    hosts.emplace_back();
    for (const trace::PlanRank& r : p.ranks) hosts.back().push_back(r.host);
    inputs.push_back({d, std::move(p), n});
    counts.push_back(n);
  }
  std::vector<trace::ExtrapNote> hint_notes = take_traced_hints(o, inputs);
  if (o.cb_nodes > 0) {  // before the extrapolation: a hint refused is refused at once
    postproc::CollectiveHints h = hints_of(o);
    if (h.cb_config_list.empty()) h.cb_config_list = "*:*";
    postproc::check_hints(h);
  }
  if (sieve_given(o)) postproc::check_sieve_hints(sieve_of(o));
  // Left to the exit to free: tearing down 8,192 ranks' tables would take a
  // good part of the command.
  std::vector<std::string> warnings;
  trace::Plan* extrapolated = nullptr;
  extrap::CollectiveIo dropped;
  try {
    extrapolated = new trace::Plan(
        extrap::extrapolate(std::move(inputs), o.extrapolate, {o.cb_buffer_size, o.strict}, &warnings, &dropped));
  } catch (const ToolError& e) {
    throw ToolError(std::string("cannot extrapolate: ") + e.what() + without_smallest(o, counts));
  }
  place_hosts(*extrapolated, hosts);
  if (o.cb_nodes > 0 || sieve_given(o) || dropped.dropped || o.ompio_fcoll != "automatic")
    redeal(*extrapolated, o, dropped);
  extrapolated->extrap.notes.insert(extrapolated->extrap.notes.end(), hint_notes.begin(), hint_notes.end());
  if (!hint_notes.empty()) std::cout << "mpior-post: MPI-IO hints: " << notes_text(hint_notes) << "\n";
  const trace::Plan& plan = *extrapolated;
  for (const std::string& w : warnings) std::cerr << "mpior-post: warning: " << w << "\n";
  const postproc::PlanSummary& summary = *new postproc::PlanSummary(postproc::summarize_plan(plan, o.plan));
  postproc::write_plan_dir_atomic(o.plan, plan, summary.text, summary.json);
  std::cout << "mpior-post: wrote " << o.plan << ": " << plan.ranks.size() << " ranks extrapolated from "
            << o.dirs.size() << " runs, " << plan.streams.size() << " streams, " << plan.files.size() << " files, "
            << plan.comms.size() << " communicators, " << plan.extrap.notes.size() - hint_notes.size()
            << " modelled quantities" << approximated_text(plan) << "\n";
  return 0;
}

int compare(const Options& o) {
  using namespace mpior;
  trace::Plan a = trace::read_plan(plan_file_of(o.compare[0]));
  trace::Plan b = trace::read_plan(plan_file_of(o.compare[1]));
  std::string diff = postproc::compare_plans(a, b, o.events_only);
  if (diff.empty()) {
    std::cout << "mpior-post: " << o.compare[0] << " and " << o.compare[1] << " are identical except timing\n";
    return 0;
  }
  std::cout << "mpior-post: " << o.compare[0] << " and " << o.compare[1] << " differ: " << diff << "\n";
  return 1;
}

std::string input_name(const Options& o) {
  if (!o.dump.empty()) return o.dump;
  if (!o.compare.empty()) return o.compare[0] + " or " + o.compare[1];
  std::string out;
  for (const std::string& d : o.dirs) out += (out.empty() ? "" : ", ") + d;
  return out;
}

void say_reports_written(const Options& o) {
  if (!o.timeline.empty()) std::cout << "mpior-post: wrote timeline " << o.timeline << "\n";
  if (!o.html.empty()) std::cout << "mpior-post: wrote report " << o.html << "\n";
}

// DIR -> plan, and the timeline and HTML report when asked for (written even
// when the plan is refused for ranks without a trace).
void post(const Options& o) {
  using namespace mpior;
  std::string plan_dir = o.plan.empty() ? postproc::default_plan_dir(o.dirs[0]) : o.plan;
  std::vector<postproc::MessagePair> pairs;
  postproc::PairSink sink;
  if (!o.timeline.empty()) sink = [&pairs](const postproc::MessagePair& p) { pairs.push_back(p); };
  bool reported = false;
  auto reports = [&](const postproc::TraceSet& set, const postproc::Analysis& a) {
    postproc::report_progress("writing reports", 0, 1);
    if (!o.timeline.empty()) postproc::write_trace_timeline(o.timeline, set, a, pairs, o.max_events);
    if (!o.html.empty()) postproc::write_trace_html(o.html, set, a);
    reported = true;
  };
  report::PhaseProgress phases;
  postproc::set_progress([&phases](const char* p, uint64_t done, uint64_t total) { phases.set(p, done, total); });
  {
    report::ProgressBar bar(report::progress_wanted(o.quiet), [&phases](double) { return phases.view(); });
    std::ostringstream log;  // printed once the bar is gone
    try {
      postproc::post_process(o.dirs[0], plan_dir, log, std::cerr,
                             {.sink = sink, .verify = o.verify, .partial = o.partial, .reports = reports});
    } catch (const ToolError&) {
      bar.stop();
      postproc::set_progress({});
      std::cout << log.str();
      if (reported) say_reports_written(o);
      throw;
    }
    bar.stop();
    std::cout << log.str();
  }
  postproc::set_progress({});
  say_reports_written(o);
}

int run(Options& o) {
  using namespace mpior;
  try {
    int rc = 0;
    if (!o.dump.empty()) {
      postproc::dump_file(o.dump, std::cout);
    } else if (!o.compare.empty()) {
      rc = compare(o);
    } else if (o.extrapolate) {
      rc = extrapolate(o);
    } else {
      post(o);
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "mpior-post: cannot write to standard output\n";
      return kUsageError;
    }
    return rc;
  } catch (const ToolError& e) {
    std::cerr << "mpior-post: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "mpior-post: out of memory reading " << input_name(o) << "\n";
  } catch (const std::exception& e) {
    // Last resort: every known failure has a message of its own above.
    std::cerr << "mpior-post: " << input_name(o) << ": cannot be processed: " << e.what() << "\n";
  }
  return o.compare.empty() ? 1 : kUsageError;
}

void check_usage(const Options& o) {
  if (o.extrapolate) {
    if (o.plan.empty()) throw CLI::ValidationError("--extrapolate", "needs -o PLAN, the directory to write");
    if (o.dirs.size() < 3)
      throw CLI::ValidationError("--extrapolate", "needs three or more trace or plan directories of the same program");
    return;
  }
  if (!o.compare.empty() || !o.dump.empty()) return;
  if (o.dirs.empty()) throw CLI::RequiredError("DIR (or --dump FILE, --compare A B)");
  if (o.dirs.size() > 1) throw CLI::ValidationError("DIR", "one trace directory (several only with --extrapolate)");
}

// The options of the default mode (post one trace directory) and its
// reports; returns the flags and options the other modes exclude.
struct PostOptions {
  CLI::Option *dirs, *plan, *verify, *timeline, *html, *partial;
};
PostOptions add_post_options(CLI::App& app, Options& o) {
  PostOptions p;
  p.dirs = app.add_option("DIR", o.dirs,
                          "trace directory written by libmpior.so (with --extrapolate: "
                          "three or more trace or plan directories)");
  p.plan = app.add_option("-o,--output", o.plan, "plan directory to write (default DIR/plan)");
  p.verify = app.add_flag("--verify", o.verify,
                          "check, before writing it, that the merged plan gives back every rank's events "
                          "exactly (walks every event once more)");
  p.timeline = app.add_option("--timeline", o.timeline,
                              "also write the run as Chrome trace-event JSON to FILE (open it in "
                              "ui.perfetto.dev): ranks, threads, calls, messages and collectives");
  p.html = app.add_option("--html", o.html,
                          "also write a self-contained HTML report to FILE: job, I/O volume per rank over "
                          "time, calls, access sizes, files, MPI logged and pruned, loops");
  p.partial = app.add_flag("--partial", o.partial,
                           "when some ranks left no trace, still write the plan: the missing ranks keep their place "
                           "with nothing to do, and mpior-replay replays the others without their parts of "
                           "collectives and messages");
  app.add_option("--timeline-max-events", o.max_events,
                 "at most N slices in the timeline, shared by the streams (the metadata says when it cut)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "no progress bar");
  return p;
}

// ROMIO's data sieving hints for independent strided calls.
void add_sieve_options(CLI::App& app, Options& o, CLI::Option* extrap_opt) {
  for (auto [name, value] : {std::pair{"--romio-ds-read", &o.ds_read}, std::pair{"--romio-ds-write", &o.ds_write}})
    app.add_option(name, *value,
                   "with --extrapolate: ROMIO's hint of that name for independent reads and writes through a "
                   "non-contiguous view: 'automatic' or 'enable' (data sieving: whole buffers read, and for "
                   "writes read, filled and written back) or 'disable' (one transfer a piece); the other sieving "
                   "hints take ROMIO's defaults")
        ->check(CLI::IsMember({"automatic", "enable", "disable"}))
        ->needs(extrap_opt);
  for (auto [name, value] : {std::pair{"--ind-rd-buffer-size", &o.ind_rd_buffer_size},
                             std::pair{"--ind-wr-buffer-size", &o.ind_wr_buffer_size}})
    app.add_option(name, *value,
                   "with --extrapolate: ROMIO's hint of that name (ind_rd_buffer_size, default 4194304; "
                   "ind_wr_buffer_size, default 524288): the data sieving buffer of independent reads or writes")
        ->check(CLI::Range(int64_t(1), INT64_MAX))
        ->needs(extrap_opt);
}

// ROMIO's Lustre driver's own hints (postproc/romio_lustre.hpp).
void add_lustre_options(CLI::App& app, Options& o) {
  app.add_option("--romio-lustre-co-ratio", o.lustre.lustre_co_ratio,
                 "with --striping-factor: ROMIO's romio_lustre_co_ratio hint: at most this many aggregators a target")
      ->check(CLI::Range(1, INT32_MAX))
      ->needs("--striping-factor")
      ->capture_default_str();
  app.add_option("--romio-lustre-coll-threshold", o.lustre.lustre_coll_threshold,
                 "with --striping-factor: ROMIO's romio_lustre_coll_threshold hint: a write whose ranks' requests do "
                 "not interleave moves on each rank alone when their contiguous pieces average more bytes (0: never)")
      ->check(CLI::Range(int64_t(0), int64_t(INT32_MAX)))
      ->needs("--striping-factor")
      ->capture_default_str();
  app.add_option("--romio-lustre-ds-in-coll", o.lustre_ds_in_coll,
                 "with --striping-factor: ROMIO's romio_lustre_ds_in_coll hint: 'enable' (an aggregator's stripe with "
                 "a hole is read, then written whole) or 'disable' (each contiguous run written alone; so is "
                 "'automatic', which ROMIO's driver takes as not 'enable')")
      ->check(CLI::IsMember({"enable", "disable", "automatic"}))
      ->needs("--striping-factor")
      ->capture_default_str();
}

// For a job traced under Open MPI's OMPIO (postproc/ompio_layout.hpp).
void add_ompio_options(CLI::App& app, Options& o) {
  app.add_option("--ompio-fcoll", o.ompio_fcoll,
                 "with --extrapolate, for a job traced under Open MPI's OMPIO: its collective component, as "
                 "`--mca fcoll NAME` picks it: 'individual', 'vulcan', 'dynamic', 'dynamic_gen2' (Lustre's "
                 "default), 'two_phase', or 'automatic' (the component the job was traced with when one was "
                 "forced, else OMPIO's choice off Lustre: individual on two ranks or fewer, else vulcan)")
      ->check(CLI::IsMember(ompio_fcoll_choices()))
      ->needs("--extrapolate")
      ->capture_default_str();
}

CLI::Option* add_extrapolate_options(CLI::App& app, Options& o, const PostOptions& p) {
  auto* extrap_opt =
      app.add_option("--extrapolate", o.extrapolate,
                     "write a plan for N ranks from runs of the same program at three or more smaller rank counts "
                     "(DIRs); -o names the plan directory, written only when every quantity fits a model")
          ->check(CLI::Range(int64_t(1), int64_t(INT32_MAX)))
          ->excludes(p.verify)
          ->excludes(p.partial)
          ->excludes(p.timeline)
          ->excludes(p.html);
  app.add_option("--cb-buffer-size", o.cb_buffer_size,
                 "with --extrapolate: POSIX requests of collective MPI-IO calls larger than this are split into "
                 "requests of this size (ROMIO's cb_buffer_size; the paper's max-blocksize)")
      ->check(CLI::Range(int64_t(1), INT64_MAX))
      ->needs(extrap_opt)
      ->capture_default_str();
  app.add_option("--cb-nodes", o.cb_nodes,
                 "with --extrapolate: the POSIX reads and writes of each collective MPI-IO read and write dealt to "
                 "this many aggregators as ROMIO places them (cb_nodes): contiguous file domains, in requests "
                 "within --cb-buffer-size windows; a job traced under Open MPI's OMPIO as OMPIO places them "
                 "(docs/mpior-post.md)")
      ->check(CLI::Range(1, INT32_MAX))
      ->needs(extrap_opt);
  app.add_option("--cb-config-list", o.cb_config_list,
                 "with --cb-nodes: ROMIO's cb_config_list, as ROMIO parses it: '*:*' (the first ranks), or a comma "
                 "list of HOST[:N] and *[:N] entries (N ranks of that host, of each host not named before; hosts "
                 "from the traced host names); default '*:1' when the ranks span nodes, else '*:*'")
      ->needs("--cb-nodes");
  for (auto [name, value] : {std::pair{"--romio-cb-read", &o.cb_read}, std::pair{"--romio-cb-write", &o.cb_write}})
    app.add_option(name, *value,
                   "with --cb-nodes: ROMIO's hint of that name: 'automatic' (two-phase only where the ranks' "
                   "requests interleave, else each rank moves its own), 'enable' (always two-phase) or 'disable'")
        ->check(CLI::IsMember({"automatic", "enable", "disable"}))
        ->needs("--cb-nodes")
        ->capture_default_str();
  app.add_option("--romio-min-fdomain-size", o.min_fdomain_size,
                 "with --cb-nodes: ROMIO's romio_min_fdomain_size hint: no file domain is smaller")
      ->check(CLI::Range(int64_t(0), INT64_MAX))
      ->needs("--cb-nodes");
  app.add_option("--striping-unit", o.striping_unit,
                 "with --cb-nodes: ROMIO's striping_unit hint: file domains end at the nearest multiple of it")
      ->check(CLI::Range(int64_t(1), INT64_MAX))
      ->needs("--cb-nodes");
  app.add_option("--striping-factor", o.striping_factor,
                 "with --striping-unit: ROMIO's striping_factor hint: the file is on Lustre, striped over this many "
                 "targets, and collective writes are dealt as ROMIO's Lustre driver deals them (stripes round-robin "
                 "over the aggregators)")
      ->check(CLI::Range(1, INT32_MAX))
      ->needs("--striping-unit");
  add_lustre_options(app, o);
  add_ompio_options(app, o);
  add_sieve_options(app, o, extrap_opt);
  app.add_flag("--strict", o.strict,
               "with --extrapolate: refuse, as for structure, when no model fits an incidental quantity exactly "
               "(bytes of formatted stdio, results of calls that move no data, reads of files the job neither "
               "created nor wrote) instead of taking the best fit with a warning")
      ->needs(extrap_opt);
  return extrap_opt;
}

void add_inspect_options(CLI::App& app, Options& o, const PostOptions& p, CLI::Option* extrap_opt) {
  auto* compare_opt = app.add_option("--compare", o.compare,
                                     "compare two plans (directories or plan.mpior files): exit 0 when identical "
                                     "except timing, 1 naming the first difference, 2 on error")
                          ->expected(2)
                          ->excludes(p.dirs)
                          ->excludes(p.plan)
                          ->excludes(p.verify)
                          ->excludes(extrap_opt)
                          ->excludes(p.timeline)
                          ->excludes(p.html);
  app.add_flag("--events-only", o.events_only,
               "with --compare: compare the events alone, not how they fold into loops (a trace spilled under "
               "MPIOR_MEMORY splits loops where it spilled)")
      ->needs(compare_opt);
  app.add_option("--dump", o.dump, "print an mpior file (rank trace, job or plan; or a plan directory) as text")
      ->excludes(p.dirs)
      ->excludes(p.plan)
      ->excludes(p.verify)
      ->excludes(extrap_opt)
      ->excludes(compare_opt)
      ->excludes(p.timeline)
      ->excludes(p.html);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Turns an mpior trace directory into a replay plan (PLAN/plan.mpior, summary.txt, summary.json)."};
  app.name("mpior-post");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "mpior-post: " + std::string(e.what()) + " (see mpior-post --help)\n";
  });
  Options o;
  PostOptions post = add_post_options(app, o);
  add_inspect_options(app, o, post, add_extrapolate_options(app, o, post));
  try {
    app.parse(argc, argv);
    o.cb_buffer_size_given = app.count("--cb-buffer-size") > 0;
    o.cli = &app;
    check_usage(o);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  return run(o);
}
