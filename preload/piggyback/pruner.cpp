#include "preload/piggyback/pruner.hpp"

#include "preload/mpi_state.hpp"

namespace mpior::piggyback {

namespace pmpi = preload::mpi::pmpi;

namespace {

// Freed communicators whose channel receives posted on them may still need
// (MPI frees a communicator when its pending operations are done: MPICH's
// comm/cmfree2 completes a receive after the free). Ids are never reused:
// the channels go at a later free when no receive is outstanding, or at finish().
std::vector<int32_t> g_closing;

// Whether a posted receive was matched, and by which message: asks MPI for
// the request's status without completing it, driving progress until the
// data has arrived (MPI matched it already: see receive_order.hpp).
bool probe_matched(uint64_t handle, Envelope* matched) {
  MPI_Request req = preload::mpi::handle_of<MPI_Request>(handle);
  MPI_Status st;
  int flag = 0;
  while (!flag)
    if (pmpi::Request_get_status(req, &flag, &st) != MPI_SUCCESS) return false;
  int cancelled = 0;
  if (st.MPI_SOURCE == MPI_PROC_NULL || (pmpi::Test_cancelled(&st, &cancelled) == MPI_SUCCESS && cancelled))
    return false;
  matched->source = st.MPI_SOURCE;
  matched->tag = st.MPI_TAG;
  return true;
}

}  // namespace

void Pruner::start(bool enable, int world_rank, int world_size, uint32_t streak) {
  active_ = enable;
  me_ = world_rank;
  streak_ = streak;
  nodes_.resize(world_size);
  recv_order_ = ReceiveOrder(probe_matched);
  if (!active_) return;
  aux_shadow_ = make_private_comm(MPI_COMM_WORLD);
  if (aux_shadow_ == MPI_COMM_NULL) {
    active_ = false;
    return;
  }
  aux_.start(aux_shadow_, world_rank, world_size);
  std::vector<int32_t> world(static_cast<size_t>(world_size));
  for (int i = 0; i < world_size; ++i) world[size_t(i)] = i;
  comms_[0] = {1, MPI_COMM_WORLD, std::move(world), {}};
  comms_[1] = {2, MPI_COMM_SELF, {world_rank}, {}};
}

void Pruner::finish() {
  if (!active_) return;
  aux_.finish();
  release_held();
  for (auto& [key, p] : persistent_) {  // the application did not free its own
    pmpi::Request_free(&p->req);
    if (p->active) new std::shared_ptr<PersistentExchange>(p);  // NOLINT: left to MPI
  }
  persistent_.clear();
  pmpi::Comm_free(&aux_shadow_);
  comms_.clear();
  g_closing.clear();
  last_id_ = -1;
  last_ = nullptr;
  active_ = false;
}

namespace {
uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 29);
}
}  // namespace

void Pruner::comm_created(int32_t comm, MPI_Comm app, int32_t parent, uint64_t parent_seq,
                          std::span<const int32_t> members) {
  if (!active_ || comm < 0 || app == MPI_COMM_NULL) return;
  int inter = 0;
  if (pmpi::Comm_test_inter(app, &inter) != MPI_SUCCESS || inter) return;
  uint64_t key = 0;
  auto p = parent < 0 ? comms_.end() : comms_.find(parent);
  if (p != comms_.end()) {
    // Every member of the parent numbers its collectives alike; siblings
    // (a split's colors) differ by their members.
    key = mix(mix(p->second.key, parent_seq), members.size());
    for (int32_t m : members) key = mix(key, uint64_t(uint32_t(m)));
    key |= 1ull << 63;
  } else {
    // Agreed: above every key each member has used, so two communicators
    // that share a member never share a key.
    uint64_t mine = next_key_;
    if (pmpi::Allreduce(&mine, &key, 1, MPI_UINT64_T, MPI_MAX, app) != MPI_SUCCESS) return;
    next_key_ = key + 1;
  }
  last_id_ = -1;
  comms_[comm] = {key, app, {members.begin(), members.end()}, {}};
}

// Not MPI_Comm_dup, which copies the application's attributes (running its
// copy callbacks): a communicator over the same group, collective over its
// members only. Intercommunicators get none (their calls are always logged).
MPI_Comm make_private_comm(MPI_Comm app) {
  int inter = 0;
  if (pmpi::Comm_test_inter(app, &inter) != MPI_SUCCESS || inter) return MPI_COMM_NULL;
  MPI_Group g;
  if (pmpi::Comm_group(app, &g) != MPI_SUCCESS) return MPI_COMM_NULL;
  MPI_Comm out = MPI_COMM_NULL;
#if defined(OPEN_MPI)
  // Open MPI 4.1's Comm_create_group copies the parent's attributes (running
  // their copy callbacks); its Comm_create, over the same members, does not.
  if (pmpi::Comm_create(app, g, &out) != MPI_SUCCESS) out = MPI_COMM_NULL;
#else
  constexpr int kShadowTag = 0x6d70;
  if (pmpi::Comm_create_group(app, g, kShadowTag, &out) != MPI_SUCCESS) out = MPI_COMM_NULL;
#endif
  pmpi::Group_free(&g);
  return out;
}

void Pruner::comm_freed(int32_t comm) {
  last_id_ = -1;
  if (recv_order_.outstanding() > 0) {
    g_closing.push_back(comm);
    return;
  }
  comms_.erase(comm);
  for (int32_t c : g_closing) comms_.erase(c);
  g_closing.clear();
}

const Pruner::Channel& Pruner::channel(int32_t comm) {
  static const Channel none;
  if (comm == last_id_) return *last_;
  auto it = comms_.find(comm);
  if (it == comms_.end()) return none;
  last_id_ = comm;
  last_ = &it->second;
  return *last_;
}

bool Pruner::send(int32_t comm, int dest, int tag, AuxMessage aux, bool force) {
  const Channel& ch = channel(comm);
  int32_t dest_world = world_of(ch, dest);
  bool log = force || nodes_.pending(dest_world);
  aux.decision = log;
  aux.tag = tag;
  aux.seq = send_order_.next(comm, dest, tag);
  aux.comm_key = ch.key;
  aux_.send(dest_world, aux);
  nodes_.mark(dest_world);
  return log;
}

void Pruner::receive_posted(int32_t comm, MPI_Request handle, int source, int tag) {
  recv_order_.posted(comm, preload::mpi::handle_key(handle),
                     {source == MPI_ANY_SOURCE ? -1 : source, tag == MPI_ANY_TAG ? -1 : tag});
}

void Pruner::receive_dropped(int32_t comm, MPI_Request handle) {
  recv_order_.forget(comm, preload::mpi::handle_key(handle));
}

Received Pruner::received(int32_t comm, MPI_Request handle, int source, int tag) {
  const Channel& ch = channel(comm);
  int32_t source_world = world_of(ch, source);
  Envelope status{source, tag};
  uint64_t seq = handle == MPI_REQUEST_NULL ? recv_order_.completed_blocking(comm, status)
                                            : recv_order_.completed(comm, preload::mpi::handle_key(handle), status);
  Received r;
  if (source_world < 0) return r;  // no member sent it: logged, nothing to take
  bool found = true;
  r.aux = aux_.receive(ch.key, source_world, tag, seq, &found);
  if (!found) {  // no word from the sender: keep the receive (the send may be lost)
    nodes_.mark(source_world);
    return r;
  }
  r.log = r.aux.decision || nodes_.pending(source_world);
  r.on_behalf = r.log && !r.aux.decision;
  nodes_.mark(source_world);
  return r;
}

bool Pruner::on_streak(const Channel& c, DecisionExchange& x) {
  if (c.streak.skip()) {
    x.result = 1;
    ++skipped_;
    return true;
  }
  x.streak = &c.streak;
  ++exchanged_;
  return false;
}

void Pruner::all_to_all_begin(int32_t comm, DecisionExchange& x) {
  x.mine = nodes_.pending_any(x.members, me_);
  if (x.members.size() == 1) {  // a communicator of one (MPI_COMM_SELF): the decision is this rank's own
    x.result = x.mine;
    return;
  }
  const Channel& c = channel(comm);
  if (!on_streak(c, x)) pmpi::Iallreduce(&x.mine, &x.result, 1, MPI_INT, MPI_LOR, c.app, &x.req);
}

bool Pruner::all_to_all_end(DecisionExchange& x) {
  pmpi::Wait(&x.req, MPI_STATUS_IGNORE);
  if (x.streak) x.streak->agreed(x.result, streak_);
  nodes_.mark_all(x.members);
  return x.result;
}

namespace {
int32_t root_world(const DecisionExchange& x) {
  return x.root >= 0 && size_t(x.root) < x.members.size() ? x.members[size_t(x.root)] : -1;
}
}  // namespace

void Pruner::one_to_all_begin(int32_t comm, DecisionExchange& x) {
  x.result = x.me == x.root ? nodes_.pending_any(x.members, me_) : 0;
  if (x.members.size() == 1) return;
  const Channel& c = channel(comm);
  if (!on_streak(c, x)) pmpi::Ibcast(&x.result, 1, MPI_INT, x.root, c.app, &x.req);
}

bool Pruner::one_to_all_end(DecisionExchange& x) {
  pmpi::Wait(&x.req, MPI_STATUS_IGNORE);
  if (x.streak) x.streak->agreed(x.result, streak_);
  if (x.me == x.root)
    nodes_.mark_all(x.members);
  else
    nodes_.mark(root_world(x));
  return x.result;
}

void Pruner::all_to_one_begin(int32_t comm, DecisionExchange& x) {
  bool am_root = x.me == x.root;
  x.mine_byte = am_root ? nodes_.pending_any(x.members, me_) : nodes_.pending(root_world(x));
  x.all.assign(am_root ? x.members.size() : 0, 0);
  if (x.members.size() == 1) return;
  pmpi::Igather(&x.mine_byte, 1, MPI_CHAR, x.all.data(), 1, MPI_CHAR, x.root, channel(comm).app, &x.req);
}

RootedDecision Pruner::all_to_one_end(DecisionExchange& x) {
  pmpi::Wait(&x.req, MPI_STATUS_IGNORE);
  RootedDecision d;
  d.log = x.mine_byte;
  if (x.me != x.root) {
    nodes_.mark(root_world(x));
    return d;
  }
  for (size_t i = 0; i < x.all.size(); ++i) {
    if (int(i) == x.root) continue;
    if (x.all[i]) {
      d.log = true;
      d.members_logged.push_back(int32_t(i));
    } else {
      d.all_members = false;
    }
  }
  if (d.all_members) d.members_logged.clear();
  nodes_.mark_all(x.members);
  return d;
}

void Pruner::nonblocking_begin(int32_t comm, HeldCollective& h, bool one_to_all) {
  DecisionExchange& x = h.x;
  x.members = h.members;
  x.posted = true;
  x.epoch = nodes_.now();
  bool member = x.root >= 0 && x.me != x.root;  // of a rooted collective, not its root
  if (one_to_all) {
    x.result = member ? 0 : nodes_.pending_any(x.members, me_);
    h.local = x.result;
    if (h.persistent) {
      h.persistent->result = x.result;
      h.persistent->active = pmpi::Start(&h.persistent->req) == MPI_SUCCESS;
      return;
    }
    pmpi::Ibcast(&x.result, 1, MPI_INT, x.root, channel(comm).app, &x.req);
    return;
  }
  x.mine = member ? nodes_.pending(root_world(x)) : nodes_.pending_any(x.members, me_);
  h.local = x.mine;
  if (h.persistent) {
    h.persistent->mine = x.mine;
    h.persistent->active = pmpi::Start(&h.persistent->req) == MPI_SUCCESS;
    return;
  }
  pmpi::Iallreduce(&x.mine, &x.result, 1, MPI_INT, MPI_LOR, channel(comm).app, &x.req);
}

bool Pruner::nonblocking_end(HeldCollective& h) {
  DecisionExchange& x = h.x;
  if (h.persistent) {
    PersistentExchange& p = *h.persistent;
    if (p.active) pmpi::Wait(&p.req, MPI_STATUS_IGNORE);
    x.result = p.active ? p.result : 1;  // not started: logged, as on every member
    p.active = false;
  } else {
    pmpi::Wait(&x.req, MPI_STATUS_IGNORE);
  }
  if (x.root >= 0 && x.me != x.root)
    nodes_.mark_at(root_world(x), x.epoch);
  else
    nodes_.mark_all_at(x.members, x.epoch);
  return x.result;
}

void Pruner::hold(uint64_t request, std::unique_ptr<HeldCollective> h) {
  std::lock_guard lock(held_lock_);
  auto& slot = held_[request];
  if (slot) orphans_.push_back(std::move(slot));  // a request handle MPI reused: the old one was freed
  slot = std::move(h);
}

std::unique_ptr<HeldCollective> Pruner::take_held(uint64_t request) {
  std::lock_guard lock(held_lock_);
  if (held_.empty()) return nullptr;
  auto it = held_.find(request);
  if (it == held_.end()) return nullptr;
  std::unique_ptr<HeldCollective> h = std::move(it->second);
  held_.erase(it);
  return h;
}

void Pruner::drop_held(uint64_t request) {
  std::unique_ptr<HeldCollective> h = take_held(request);
  std::lock_guard lock(held_lock_);
  if (h) orphans_.push_back(std::move(h));
}

void Pruner::persistent_init(int32_t comm, uint64_t request, int root, bool one_to_all) {
#if MPI_VERSION >= 4
  if (!pmpi::Bcast_init || !pmpi::Allreduce_init) return;
  auto p = std::make_shared<PersistentExchange>();
  MPI_Comm app = channel(comm).app;
  int rc = one_to_all ? pmpi::Bcast_init(&p->result, 1, MPI_INT, root, app, MPI_INFO_NULL, &p->req)
                      : pmpi::Allreduce_init(&p->mine, &p->result, 1, MPI_INT, MPI_LOR, app, MPI_INFO_NULL, &p->req);
  if (rc != MPI_SUCCESS) return;
  std::lock_guard lock(held_lock_);
  persistent_[request] = std::move(p);
#else
  (void)comm, (void)request, (void)root, (void)one_to_all;
#endif
}

std::shared_ptr<PersistentExchange> Pruner::persistent(uint64_t request) {
  std::lock_guard lock(held_lock_);
  auto it = persistent_.find(request);
  return it == persistent_.end() ? nullptr : it->second;
}

void Pruner::persistent_free(uint64_t request) {
  std::shared_ptr<PersistentExchange> p;
  {
    std::lock_guard lock(held_lock_);
    if (persistent_.empty()) return;
    auto it = persistent_.find(request);
    if (it == persistent_.end()) return;
    p = std::move(it->second);
    persistent_.erase(it);
  }
  pmpi::Request_free(&p->req);  // an active one completes unseen, its buffers kept:
  if (p->active) new std::shared_ptr<PersistentExchange>(std::move(p));  // NOLINT: left to MPI
}

// At MPI_Finalize, without waiting: exchanges whose application request was
// freed or never completed. Finished ones are let go; MPI keeps the buffers
// of the others, which stay allocated.
void Pruner::release_held() {
  std::lock_guard lock(held_lock_);
  for (auto& [key, h] : held_) orphans_.push_back(std::move(h));
  held_.clear();
  for (auto& h : orphans_) {
    int done = 0;
    if (h->x.req != MPI_REQUEST_NULL) pmpi::Test(&h->x.req, &done, MPI_STATUS_IGNORE);
    if (!done && h->x.req != MPI_REQUEST_NULL) (void)h.release();  // MPI still owns its buffers
  }
  orphans_.clear();
}

}  // namespace mpior::piggyback
