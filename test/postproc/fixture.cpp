#include "test/postproc/fixture.hpp"

#include <fcntl.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "trace/arg_setters.hpp"
#include "trace/arg_views.hpp"
#include "trace/format.hpp"

namespace mpior::test {

namespace arg = trace::arg;
using trace::Kind;

RankBuilder::RankBuilder(int32_t rank, int32_t size, trace::BuilderOptions opt)
    : builders_(1), now_(1, 1000), opt_(opt) {
  builders_[0] = trace::StreamBuilder(opt);
  trace_.process.job_id = kJobId;
  trace_.process.rank = rank;
  trace_.process.size = size;
  trace_.process.mpi = true;
  trace_.process.finished = true;
  trace_.process.host = "node" + std::to_string(rank / 4);
  trace_.process.cwd = "/work";
  trace_.files = {{"<stdin>", -1}, {"<stdout>", -1}, {"<stderr>", -1}};
  std::vector<int32_t> world;
  for (int32_t r = 0; r < size; ++r) world.push_back(r);
  trace_.comms.push_back({0, trace::CommOrigin::world, -1, 0, 0, 0, world});
  trace_.comms.push_back({1, trace::CommOrigin::self, -1, 0, 0, 0, {rank}});
}

int32_t RankBuilder::file(const std::string& path, int64_t flags) {
  trace_.files.push_back({path, flags});
  return int32_t(trace_.files.size() - 1);
}

int32_t RankBuilder::comm(trace::CommOrigin origin, int32_t parent, uint64_t parent_seq, std::vector<int32_t> members) {
  int32_t id = int32_t(trace_.comms.size());
  trace_.comms.push_back({id, origin, parent, parent_seq, 0, 0, std::move(members)});
  return id;
}

void RankBuilder::thread(uint32_t t) {
  while (t >= builders_.size()) builders_.emplace_back(opt_);
  if (t >= now_.size()) now_.resize(t + 1, 1000);
  cur_ = t;
}

void RankBuilder::call(Kind kind, std::initializer_list<std::pair<int, int64_t>> args, int64_t ret, int64_t dur,
                       uint8_t depth, uint8_t flags) {
  trace::RawEvent ev;
  ev.kind = kind;
  ev.depth = depth;
  ev.flags = flags;
  bool numbered = false;
  for (auto [slot, v] : args) {
    ev.args[size_t(slot)] = v;
    numbered = numbered || slot == arg::coll_seq;
  }
  // Collectives are numbered per communicator, as the tracer does (a
  // creation's slot holds the new communicator: its number is the table's
  // parent_seq).
  trace::OpClass op = trace::info(kind).op;
  if (trace::is_mpi(kind) && trace::is_collective(op)) {
    uint64_t n = collectives_[mpi_args(ev).comm()]++;
    if (!numbered && op != trace::OpClass::comm_create) mpi_args_mut(ev).coll_seq() = int64_t(n);
    if (op == trace::OpClass::comm_create) mpi_args_mut(ev).create_seq() = int64_t(n);  // read for MPI_COMM_NULL
  }
  ev.ret = ret;
  ev.callsite = site_;
  if (depth == 0) now_[cur_] += 500;
  ev.start = now_[cur_];
  ev.end = ev.start + dur;
  if (depth == 0) now_[cur_] = ev.end;
  builders_[cur_].append(ev);
}

void RankBuilder::send(int32_t comm, int64_t dest, int64_t tag, int64_t bytes) {
  call(Kind::MPI_Send, {{arg::comm, comm}, {arg::peer, dest}, {arg::tag, tag}, {arg::bytes, bytes}});
}

void RankBuilder::isend(int32_t comm, int64_t dest, int64_t tag, int64_t request) {
  call(Kind::MPI_Isend,
       {{arg::comm, comm}, {arg::peer, dest}, {arg::tag, tag}, {arg::bytes, 8}, {arg::request, request}});
}

void RankBuilder::recv(int32_t comm, int64_t source, int64_t tag, int64_t actual_source, int64_t actual_tag) {
  call(Kind::MPI_Recv, {{arg::comm, comm},
                        {arg::peer, source},
                        {arg::tag, tag},
                        {arg::bytes, 8},
                        {arg::src, actual_source},
                        {arg::stag, actual_tag}});
}

void RankBuilder::irecv(int32_t comm, int64_t source, int64_t tag, int64_t request) {
  call(Kind::MPI_Irecv,
       {{arg::comm, comm}, {arg::peer, source}, {arg::tag, tag}, {arg::bytes, 8}, {arg::request, request}});
}

void RankBuilder::sendrecv(int32_t comm, int64_t dest, int64_t tag, int64_t source, int64_t rtag, int64_t actual_source,
                           int64_t actual_tag) {
  call(Kind::MPI_Sendrecv, {{arg::comm, comm},
                            {arg::peer, dest},
                            {arg::tag, tag},
                            {arg::bytes, 8},
                            {arg::peer2, source},
                            {arg::tag2, rtag},
                            {arg::src, actual_source},
                            {arg::stag, actual_tag}});
}

void RankBuilder::wait(std::initializer_list<Completion> done) {
  call(Kind::MPI_Waitall, {});
  int64_t end = now_[cur_];
  for (const Completion& c : done) {
    trace::RawEvent ev;
    ev.kind = Kind::mpior_complete;
    ev.depth = 1;
    ev.start = ev.end = end;
    mpi_args_mut(ev).req_kind() = c.req_kind;
    mpi_args_mut(ev).request() = c.request;
    mpi_args_mut(ev).src() = c.source;
    mpi_args_mut(ev).stag() = c.tag;
    builders_[cur_].append(ev);
  }
}

void RankBuilder::collective(Kind kind, int32_t comm, int64_t root, int64_t bytes) {
  call(kind, {{arg::comm, comm}, {arg::root, root}, {arg::bytes, bytes}});
}

void RankBuilder::create(Kind kind, int32_t parent, int32_t new_id) {
  call(kind, {{arg::comm, parent}, {arg::newcomm, new_id}});
}

void RankBuilder::open(int32_t file, int64_t fd, int64_t flags, int64_t ret) {
  call(Kind::open, {{arg::handle, fd}, {arg::file, file}, {arg::flags, flags}, {arg::mode, 0644}}, ret);
}

void RankBuilder::pwrite(int32_t file, int64_t fd, int64_t offset, int64_t count, int64_t ret) {
  call(Kind::pwrite, {{arg::handle, fd}, {arg::file, file}, {arg::offset, offset}, {arg::count, count}}, ret);
}

void RankBuilder::pread(int32_t file, int64_t fd, int64_t offset, int64_t count, int64_t ret) {
  call(Kind::pread, {{arg::handle, fd}, {arg::file, file}, {arg::offset, offset}, {arg::count, count}}, ret);
}

trace::RankTrace RankBuilder::finish() {
  trace::RankTrace t = trace_;
  int64_t end = 0;
  for (uint32_t i = 0; i < builders_.size(); ++i) {
    t.streams.push_back(builders_[i].snapshot(t.process.rank, i));
    end = std::max(end, now_[i]);
  }
  t.process.end_ns = end + 1000;
  return t;
}

trace::JobInfo complete_job(int32_t size) {
  trace::JobInfo j;
  j.job_id = kJobId;
  j.size = size;
  j.state = trace::JobState::complete;
  j.cmdline = "mpirun -n " + std::to_string(size) + " ./app";
  j.cwd = "/work";
  j.host = "node0";
  for (int32_t r = 0; r < size; ++r) j.ranks_written.push_back(r);
  return j;
}

postproc::TraceSet make_set(std::vector<trace::RankTrace> ranks) {
  postproc::TraceSet set;
  set.dir = "mem";
  set.job = complete_job(int32_t(ranks.size()));
  set.ranks = std::move(ranks);
  postproc::check_trace_set(set);
  return set;
}

void write_trace_dir(const std::string& dir, const trace::JobInfo& job, const std::vector<trace::RankTrace>& ranks) {
  std::filesystem::create_directories(dir);
  trace::write_file_atomic(dir + "/" + trace::kJobFileName, trace::encode(job));
  for (const trace::RankTrace& t : ranks)
    trace::write_file_atomic(dir + "/" + trace::rank_file_name(t.process.rank), trace::encode(t));
}

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/mpior-post-test.XXXXXX";
  if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed for " + templ);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace mpior::test
