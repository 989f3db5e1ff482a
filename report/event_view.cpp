#include "report/event_view.hpp"

#include "trace/arg_views.hpp"

namespace mpior::report {

using trace::OpClass;

std::string TableNames::path(int64_t local_file) const {
  if (local_file < 0 || size_t(local_file) >= files_.size()) return {};
  int32_t g = files_[size_t(local_file)];
  return g >= 0 && size_t(g) < paths_.size() ? paths_[size_t(g)] : std::string();
}

int64_t TableNames::comm(int64_t local_comm) const {
  if (local_comm < 0 || size_t(local_comm) >= comms_.size()) return -1;
  return comms_[size_t(local_comm)];
}

int64_t TableNames::world(int64_t global_comm, int64_t comm_rank) const {
  if (global_comm < 0 || size_t(global_comm) >= members_.size() || !members_[size_t(global_comm)]) return -1;
  const std::vector<int32_t>& m = *members_[size_t(global_comm)];
  return comm_rank >= 0 && size_t(comm_rank) < m.size() ? m[size_t(comm_rank)] : -1;
}

bool is_record(const trace::Event& ev) { return ev.op() == OpClass::complete || ev.op() == OpClass::member; }

const char* category(const trace::Event& ev) {
  if (is_record(ev)) return "record";
  if (trace::is_mpi(ev.kind)) return "mpi";
  if (trace::is_io(ev.kind)) return "io";
  return "other";
}

namespace {

bool is_p2p(OpClass op) {
  return op == OpClass::send || op == OpClass::isend || op == OpClass::recv || op == OpClass::irecv ||
         op == OpClass::sendrecv;
}

int64_t peer_world(const RankNames& names, int64_t comm, int64_t p) {
  return p < 0 ? p : names.world(comm, p);  // wildcards and MPI_PROC_NULL stay as they are (-1, -2)
}

nlohmann::json mpi_fields(const trace::Event& ev, const RankNames& names) {
  const trace::MpiArgs m = mpi_args(ev);
  OpClass op = ev.op();
  int64_t comm = names.comm(m.comm());
  nlohmann::json a = {{"comm", comm}, {"bytes", m.bytes()}};
  if (is_p2p(op)) {
    a["peer"] = peer_world(names, comm, m.peer());
    a["tag"] = m.tag();
    if (op == OpClass::sendrecv) {
      a["source"] = peer_world(names, comm, m.peer2());
      a["recv_tag"] = m.tag2();
    }
    if (op == OpClass::isend || op == OpClass::irecv) a["request"] = m.request();
  } else if (trace::is_collective(op)) {
    a["instance"] = m.coll_seq();
    if (trace::is_one_to_all(op) || trace::is_all_to_one(op)) a["root"] = peer_world(names, comm, m.root());
  }
  if (ev.flags & trace::flag::on_behalf) a["logged_by_receiver"] = true;
  return a;
}

}  // namespace

nlohmann::json event_args(const trace::Event& ev, const RankNames& names) {
  nlohmann::json a;
  if (trace::is_mpi(ev.kind)) {
    a = mpi_fields(ev, names);
  } else if (trace::is_io(ev.kind)) {
    std::string path = names.path(io_args(ev).file());
    a = {{"file", path.empty() ? nlohmann::json(nullptr) : nlohmann::json(path)},
         {"fd", io_args(ev).handle()},
         {"offset", io_args(ev).offset()},
         {"bytes", io_args(ev).count()}};
    std::string path2 = ev.op() == OpClass::rename || ev.op() == OpClass::link ? names.path(file_args(ev).file2()) : "";
    if (!path2.empty()) a["file2"] = path2;
  }
  a["ret"] = ev.ret;
  if (ev.err) a["errno"] = ev.err;
  if (ev.depth) a["depth"] = ev.depth;
  return a;
}

}  // namespace mpior::report
