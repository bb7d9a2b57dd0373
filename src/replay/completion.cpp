// Completion and poll calls with their recorded outcomes (completion.hpp).
#include "completion.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace tracefold::replay_detail {

namespace {

enum class Forced : uint8_t {
  kTest,
  kTestall,
  kTestany,
  kTestsome,
  kWaitany,
  kWaitsome,
  kIprobe,
  kImprobe
};

// The call being forced, armed only around the one MPI_ call that is to
// consume it. Per thread: the threads of a threaded trace's replay force
// their own calls at the same time, and a forced call runs on the thread
// that armed it.
struct Plan {
  bool armed = false;
  bool consumed = false;
  Forced what = Forced::kTest;
  const Outcome* want = nullptr;
  std::string problem;
};
thread_local Plan plan;

Plan* take(Forced what) {
  if (!plan.armed || plan.consumed || plan.what != what) return nullptr;
  plan.consumed = true;
  return &plan;
}

// The MPI library's own entry: the next definition after this program's.
template <class F>
F next(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    std::fprintf(stderr, "tracefold replay: error: the MPI library has no %s\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(p);
}

int real_wait(MPI_Request* r, MPI_Status* st) {
  static const auto fn = next<int (*)(MPI_Request*, MPI_Status*)>("PMPI_Wait");
  return fn(r, st);
}

// Whether a tool (the recorder, when the replay is recorded) defines MPI_X
// in front of the MPI library. Then the call goes through MPI_X, whose
// wrapper reaches PMPI_X below; otherwise PMPI_X below is called directly
// (the library's MPI_X would not pass through it).
bool tool_wraps(const char* mpi_name, const char* pmpi_name) {
  void* m = dlsym(RTLD_DEFAULT, mpi_name);
  void* p = dlsym(RTLD_NEXT, pmpi_name);
  Dl_info a{}, b{};
  if (!m || !p || !dladdr(m, &a) || !dladdr(p, &b)) return true;
  return a.dli_fbase != b.dli_fbase;
}

struct Tools {
  bool test = tool_wraps("MPI_Test", "PMPI_Test");
  bool testall = tool_wraps("MPI_Testall", "PMPI_Testall");
  bool testany = tool_wraps("MPI_Testany", "PMPI_Testany");
  bool testsome = tool_wraps("MPI_Testsome", "PMPI_Testsome");
  bool waitany = tool_wraps("MPI_Waitany", "PMPI_Waitany");
  bool waitsome = tool_wraps("MPI_Waitsome", "PMPI_Waitsome");
  bool iprobe = tool_wraps("MPI_Iprobe", "PMPI_Iprobe");
  bool improbe = tool_wraps("MPI_Improbe", "PMPI_Improbe");
};
const Tools& tools() {
  static const Tools t;
  return t;
}

MPI_Status* status_at(MPI_Status* statuses, int k) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
}

// Completes exactly the recorded indices (Testsome/Waitsome); false when
// one of them is not an active request here.
bool complete_indices(Plan& p, int n, MPI_Request reqs[], int* outcount, int indices[],
                      MPI_Status statuses[], int& rc) {
  const Outcome& w = *p.want;
  for (int j : w.indices) {
    if (j < 0 || j >= n || reqs[j] == MPI_REQUEST_NULL) {
      p.problem = "the recorded index " + std::to_string(j) + " is no active request here";
      return false;
    }
  }
  rc = MPI_SUCCESS;
  int k = 0;
  for (int j : w.indices) {
    const int r = real_wait(&reqs[j], status_at(statuses, k));
    if (r != MPI_SUCCESS) rc = r;
    indices[k++] = j;
  }
  *outcount = k;
  return true;
}

}  // namespace

CompletionResult force_completion(Variant v, std::vector<MPI_Request>& handles, const Outcome& want,
                                  MPI_Status* status, std::vector<int>& indices) {
  CompletionResult r;
  const int n = static_cast<int>(handles.size());
  MPI_Request* h = handles.data();
  indices.resize(handles.size() + 1);
  plan = Plan{true, false, Forced::kTest, &want, {}};
  const Tools& t = tools();
  switch (v) {
    case Variant::kTest:
      plan.what = Forced::kTest;
      t.test ? MPI_Test(h, &r.flag, status) : PMPI_Test(h, &r.flag, status);
      break;
    case Variant::kTestall:
      plan.what = Forced::kTestall;
      t.testall ? MPI_Testall(n, h, &r.flag, MPI_STATUSES_IGNORE)
                : PMPI_Testall(n, h, &r.flag, MPI_STATUSES_IGNORE);
      break;
    case Variant::kTestany:
      plan.what = Forced::kTestany;
      t.testany ? MPI_Testany(n, h, &r.index, &r.flag, status)
                : PMPI_Testany(n, h, &r.index, &r.flag, status);
      break;
    case Variant::kTestsome:
      plan.what = Forced::kTestsome;
      t.testsome ? MPI_Testsome(n, h, &r.outcount, indices.data(), MPI_STATUSES_IGNORE)
                 : PMPI_Testsome(n, h, &r.outcount, indices.data(), MPI_STATUSES_IGNORE);
      break;
    case Variant::kWaitany:
      plan.what = Forced::kWaitany;
      t.waitany ? MPI_Waitany(n, h, &r.index, status) : PMPI_Waitany(n, h, &r.index, status);
      break;
    case Variant::kWaitsome:
      plan.what = Forced::kWaitsome;
      t.waitsome ? MPI_Waitsome(n, h, &r.outcount, indices.data(), MPI_STATUSES_IGNORE)
                 : PMPI_Waitsome(n, h, &r.outcount, indices.data(), MPI_STATUSES_IGNORE);
      break;
    default:
      plan.armed = false;
      r.problem = "not a completion call with an outcome";
      return r;
  }
  if (!plan.consumed)
    r.problem = "the tool in front of MPI did not pass the call on to PMPI: MPI's outcome stands";
  else
    r.problem = std::move(plan.problem);
  plan.armed = false;
  return r;
}

void issue_completion(Variant v, std::vector<MPI_Request>& handles, MPI_Status* status,
                      std::vector<int>& indices) {
  int flag = 0, index = 0, outcount = 0;
  indices.resize(handles.size() + 1);
  const int n = static_cast<int>(handles.size());
  MPI_Request* h = handles.data();
  switch (v) {
    case Variant::kTest:
      MPI_Test(h, &flag, status);
      break;
    case Variant::kTestall:
      MPI_Testall(n, h, &flag, MPI_STATUSES_IGNORE);
      break;
    case Variant::kTestany:
      MPI_Testany(n, h, &index, &flag, status);
      break;
    case Variant::kTestsome:
      MPI_Testsome(n, h, &outcount, indices.data(), MPI_STATUSES_IGNORE);
      break;
    case Variant::kWaitany:
      MPI_Waitany(n, h, &index, status);
      break;
    case Variant::kWaitsome:
      MPI_Waitsome(n, h, &outcount, indices.data(), MPI_STATUSES_IGNORE);
      break;
    default:
      break;
  }
}

std::string force_iprobe(int source, int tag, MPI_Comm comm, bool found, MPI_Status* status,
                         MPI_Message* message, int* flag) {
  Outcome want;
  want.found = found;
  if (found) {
    // The original found a message: wait until this one would too.
    int ready = 0;
    while (!ready) PMPI_Iprobe(source, tag, comm, &ready, MPI_STATUS_IGNORE);
  }
  plan = Plan{true, false, message ? Forced::kImprobe : Forced::kIprobe, &want, {}};
  const Tools& t = tools();
  if (message)
    t.improbe ? MPI_Improbe(source, tag, comm, flag, message, status)
              : PMPI_Improbe(source, tag, comm, flag, message, status);
  else
    t.iprobe ? MPI_Iprobe(source, tag, comm, flag, status)
             : PMPI_Iprobe(source, tag, comm, flag, status);
  std::string problem;
  if (!plan.consumed)
    problem = "the tool in front of MPI did not pass the call on to PMPI: MPI's outcome stands";
  plan.armed = false;
  return problem;
}

}  // namespace tracefold::replay_detail

// The replayer's own PMPI entries (exported through exported.list). Outside
// a forced call they are the MPI library's.
using tracefold::replay_detail::Forced;
using tracefold::replay_detail::next;
using tracefold::replay_detail::Plan;
using tracefold::replay_detail::real_wait;
using tracefold::replay_detail::take;

// Testany/Waitany with a recorded index: complete exactly that request.
// False (and the problem noted on the plan) when there is none to force.
static bool wait_recorded_index(Plan* p, int count, MPI_Request requests[], int* index,
                                MPI_Status* status, int& rc) {
  if (!p || p->want->index < 0) return false;
  const int i = p->want->index;
  if (i >= count || requests[i] == MPI_REQUEST_NULL) {
    p->problem = "the recorded index " + std::to_string(i) + " is no active request here";
    return false;
  }
  rc = real_wait(&requests[i], status);
  *index = i;
  return true;
}

// Testsome/Waitsome that completed some: complete exactly the recorded
// indices. False (and the problem noted) when that cannot be forced.
static bool force_indices(Plan* p, int incount, MPI_Request requests[], int* outcount,
                          int indices[], MPI_Status statuses[], int& rc) {
  if (!p || p->want->outcount <= 0) return false;
  if (!p->want->has_indices) {
    p->problem = "the trace has no indices for this call (recorded before they were)";
    return false;
  }
  rc = MPI_SUCCESS;
  return tracefold::replay_detail::complete_indices(*p, incount, requests, outcount, indices,
                                                    statuses, rc);
}

extern "C" {

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  static const auto fn = next<int (*)(MPI_Request*, int*, MPI_Status*)>("PMPI_Test");
  if (Plan* p = take(Forced::kTest); p && !p->want->found) {
    *flag = 0;  // the original found nothing: the request stays as it is
    return MPI_SUCCESS;
  }
  return fn(request, flag, status);
}

int PMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  static const auto fn = next<int (*)(int, MPI_Request*, int*, MPI_Status*)>("PMPI_Testall");
  if (Plan* p = take(Forced::kTestall); p && !p->want->found) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return fn(count, requests, flag, statuses);
}

int PMPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  static const auto fn = next<int (*)(int, MPI_Request*, int*, int*, MPI_Status*)>("PMPI_Testany");
  Plan* p = take(Forced::kTestany);
  if (p && !p->want->found) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  int rc = 0;
  if (wait_recorded_index(p, count, requests, index, status, rc)) {
    *flag = 1;
    return rc;
  }
  return fn(count, requests, index, flag, status);
}

int PMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  static const auto fn = next<int (*)(int, MPI_Request*, int*, MPI_Status*)>("PMPI_Waitany");
  Plan* p = take(Forced::kWaitany);
  int rc = 0;
  if (wait_recorded_index(p, count, requests, index, status, rc)) return rc;
  return fn(count, requests, index, status);
}

int PMPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  static const auto fn = next<int (*)(int, MPI_Request*, int*, int*, MPI_Status*)>("PMPI_Testsome");
  Plan* p = take(Forced::kTestsome);
  if (p && p->want->outcount == 0) {
    *outcount = 0;
    return MPI_SUCCESS;
  }
  if (int rc = 0; force_indices(p, incount, requests, outcount, indices, statuses, rc)) return rc;
  return fn(incount, requests, outcount, indices, statuses);
}

int PMPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  static const auto fn = next<int (*)(int, MPI_Request*, int*, int*, MPI_Status*)>("PMPI_Waitsome");
  Plan* p = take(Forced::kWaitsome);
  if (int rc = 0; force_indices(p, incount, requests, outcount, indices, statuses, rc)) return rc;
  return fn(incount, requests, outcount, indices, statuses);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  static const auto fn = next<int (*)(int, int, MPI_Comm, int*, MPI_Status*)>("PMPI_Iprobe");
  if (Plan* p = take(Forced::kIprobe); p && !p->want->found) {
    *flag = 0;  // the message may be there; the original did not see it yet
    return MPI_SUCCESS;
  }
  return fn(source, tag, comm, flag, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status) {
  static const auto fn =
      next<int (*)(int, int, MPI_Comm, int*, MPI_Message*, MPI_Status*)>("PMPI_Improbe");
  if (Plan* p = take(Forced::kImprobe); p && !p->want->found) {
    *flag = 0;
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  return fn(source, tag, comm, flag, message, status);
}

}  // extern "C"
