// cuda_emulator.h -- CPU shim that lets the project's CUDA kernels compile with g++.
//
// The emulator (emulator.py) compiles a .cu file as C++17 with this header force-included
// (-include cuda_emulator.h) and appends one launcher per kernel.  A launch runs the grid
// block by block (optionally several blocks at once on OS worker threads, each worker
// running one block at a time); the threads of a block are user-level fibers on the worker
// that are switched cooperatively, so:
//
//   * a fiber runs until it reaches __syncthreads() (or a warp intrinsic) or returns;
//     the barrier opens when every live thread of the block has arrived.  Threads are
//     resumed in a fixed order (thread 0,1,2,... or reversed), which makes every run
//     deterministic and makes a missing __syncthreads() produce a wrong answer reliably.
//   * __shared__ is `static thread_local`: shared by the fibers of a block (they share the
//     worker's OS thread), distinct between workers.  Dynamic shared memory is a per-block
//     buffer reached through HP_DYNAMIC_SHARED(type, name) (see kernels/hp_cuda.h).
//   * atomics are real hardware atomics (blocks may run in parallel).
//   * warp intrinsics (__shfl_*_sync, __ballot_sync, __any_sync, __all_sync, __syncwarp)
//     are emulated with a warp-level barrier: all live (non-exited) lanes of the warp must
//     call the same intrinsic together (convergent use, as with a full mask on real GPUs).
//     A barrier that can never open (divergent __syncthreads / warp intrinsics) is reported
//     as a launch error instead of hanging.
//
// Threads that have returned count as arrived at __syncthreads().
#ifndef HP_CUDA_EMULATOR_H
#define HP_CUDA_EMULATOR_H

#define __HP_EMULATOR__ 1

#include <cstdint>
#include <cstddef>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cfloat>
#include <cmath>
#include <math.h>
#include <type_traits>
#include <utility>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
// (Heavier standard headers -- <thread>, <vector>, <string> -- are avoided on purpose: they
// would triple the compile time of every kernel module.)

#if !defined(__x86_64__) || defined(HP_EMU_USE_UCONTEXT)
#  ifndef HP_EMU_USE_UCONTEXT
#    define HP_EMU_USE_UCONTEXT 1
#  endif
#  include <ucontext.h>
#endif

// ---------------------------------------------------------------- qualifiers
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __shared__ static thread_local
#ifdef __HP_EMU_SCAN__
// Preprocess-only pass used by emulator.py to find the kernel names.
#  define __global__ __hp_kernel_marker__
#else
#  define __global__
#endif
// __restrict__ is understood by g++ natively.

// ---------------------------------------------------------------- vector types
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
#define HP_EMU_VEC2(T, N, A) struct alignas(A) N { T x, y; }; \
  static inline N make_##N(T x, T y) { N r; r.x = x; r.y = y; return r; }
#define HP_EMU_VEC3(T, N) struct N { T x, y, z; }; \
  static inline N make_##N(T x, T y, T z) { N r; r.x = x; r.y = y; r.z = z; return r; }
#define HP_EMU_VEC4(T, N, A) struct alignas(A) N { T x, y, z, w; }; \
  static inline N make_##N(T x, T y, T z, T w) { N r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
HP_EMU_VEC2(int, int2, 8)
HP_EMU_VEC2(unsigned int, uint2, 8)
HP_EMU_VEC2(float, float2, 8)
HP_EMU_VEC2(double, double2, 16)
HP_EMU_VEC3(int, int3)
HP_EMU_VEC3(float, float3)
HP_EMU_VEC3(double, double3)
HP_EMU_VEC4(int, int4, 16)
HP_EMU_VEC4(float, float4, 16)
HP_EMU_VEC4(double, double4, 16)
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { uint3 r; r.x = x; r.y = y; r.z = z; return r; }
static inline dim3 make_dim3(unsigned int x, unsigned int y, unsigned int z) { return dim3(x, y, z); }

// ---------------------------------------------------------------- runtime
namespace hp_emu {

enum FiberState : int { RUN = 0, AT_BLOCK_BAR = 1, AT_WARP_BAR = 2, DONE = 3 };

struct Fiber {
  void* sp;                 // saved stack pointer (x86-64 switch)
#ifdef HP_EMU_USE_UCONTEXT
  ucontext_t ctx;
#endif
  uint3 tid;
  unsigned int linear, warp, lane;
  int state;
  unsigned int wops;        // warp operations done (parity selects the exchange buffer)
  const char* bar_file;     // source position of the __syncthreads() the fiber waits at
  int bar_line;
  char* stack_lo;
  char* stack_hi;
};

struct Warp {
  unsigned long long slot[2][32];
  unsigned int tag[2][32];    // warp-op index that wrote the slot (lane took part in it)
  unsigned char present[32];  // lane exists and has not exited
  int live;
  int at_bar;
};

typedef void (*RunFn)(void*);

struct Block {
  uint3 bidx;
  dim3 bdim, gdim;
  char* dyn;
  unsigned int nthreads;
  unsigned int live;
  unsigned int at_bar;
  long long sync_acc;       // __syncthreads_count/and/or accumulator
  long long sync_res;
  Fiber* fibers;
  Warp* warps;
  unsigned int nwarps;
  void* sched_sp;
#ifdef HP_EMU_USE_UCONTEXT
  ucontext_t sched_ctx;
#endif
  RunFn run;
  void* ctx;
};

static thread_local Fiber* tls_fiber = nullptr;
static thread_local Block* tls_block = nullptr;

// per-OS-thread scratch (per loaded module)
template <class T>
struct Buffer {  // minimal growable array
  T* data = nullptr;
  size_t size = 0;
  void reserve(size_t n) {
    if (n <= size) return;
    std::free(data);
    data = static_cast<T*>(std::calloc(n, sizeof(T)));
    if (!data) { std::fprintf(stderr, "hp_emu: out of memory\n"); std::abort(); }
    size = n;
  }
  ~Buffer() { std::free(data); }
};
struct WorkerScratch {
  Buffer<Fiber> fibers;
  Buffer<Warp> warps;
  Buffer<unsigned char> dyn;   // dynamic shared memory (+ alignment slack)
};
static thread_local WorkerScratch tls_scratch;

static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }

// ---- memory faults inside kernels become launch errors (like CUDA's "illegal memory
// access") instead of killing the process.  Handler installed for the duration of a launch.
static thread_local sigjmp_buf* tls_jmp = nullptr;
static thread_local void* tls_fault_addr = nullptr;
static struct sigaction g_old_segv, g_old_bus;
static void fault_handler(int sig, siginfo_t* si, void* uc) {
  if (tls_jmp) {
    tls_fault_addr = si->si_addr;
    siglongjmp(*tls_jmp, sig);
  }
  // not a kernel of this launch: hand over to the previous handler (re-raised on return)
  (void)uc;
  struct sigaction* old = sig == SIGSEGV ? &g_old_segv : &g_old_bus;
  if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction == fault_handler) {
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
  } else {
    sigaction(sig, old, nullptr);
  }
}
static pthread_mutex_t g_sig_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_sig_users = 0;

// Error state of one launch, shared by its worker threads (several Python threads may
// launch kernels of the same module concurrently: each launch has its own state).
struct LaunchState {
  int failed;
  char err[1024];
};
static thread_local LaunchState* tls_launch = nullptr;
static thread_local char tls_last_err[1024];  // message of the calling thread's last launch

static inline bool failed() { return __atomic_load_n(&tls_launch->failed, __ATOMIC_RELAXED) != 0; }

static void set_error(const char* msg) {
  if (__atomic_exchange_n(&tls_launch->failed, 1, __ATOMIC_SEQ_CST) == 0) {
    std::snprintf(tls_launch->err, sizeof tls_launch->err, "%s", msg);
  }
}

#ifndef HP_EMU_USE_UCONTEXT
// void hp_emu_switch(void** save_sp, void* new_sp): save callee-saved registers on the
// current stack, store rsp in *save_sp, switch to new_sp and restore from there.
extern "C" void hp_emu_switch(void** save_sp, void* new_sp);
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".local hp_emu_switch\n"
    ".type hp_emu_switch,@function\n"
    "hp_emu_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size hp_emu_switch, .-hp_emu_switch\n");
#endif

static inline void yield_to_scheduler(Fiber* f) {
  Block* B = tls_block;
#ifdef HP_EMU_USE_UCONTEXT
  swapcontext(&f->ctx, &B->sched_ctx);
#else
  hp_emu_switch(&f->sp, B->sched_sp);
#endif
}

[[noreturn]] static void fiber_main() {
  Block* B = tls_block;
  B->run(B->ctx);
  Fiber* f = tls_fiber;
  f->state = DONE;
  B->live--;
  Warp& w = B->warps[f->warp];
  w.live--;
  w.present[f->lane] = 0;
  yield_to_scheduler(f);
  __builtin_trap();
}

static inline void prepare_fiber(Fiber* f) {
#ifdef HP_EMU_USE_UCONTEXT
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = f->stack_lo;
  f->ctx.uc_stack.ss_size = (size_t)(f->stack_hi - f->stack_lo);
  f->ctx.uc_link = nullptr;
  makecontext(&f->ctx, (void (*)())fiber_main, 0);
#else
  // Stack (high to low): [top-8] 0 (fake return address of fiber_main), [top-16] fiber_main,
  // rbp rbx r12 r13 r14 r15.  (MXCSR / x87 control words are not switched: kernels do not
  // change rounding modes.)
  uintptr_t top = ((uintptr_t)f->stack_hi) & ~(uintptr_t)15;
  void** sp = (void**)top;
  *--sp = nullptr;
  *--sp = (void*)&fiber_main;
  for (int i = 0; i < 6; ++i) *--sp = nullptr;
  f->sp = (void*)sp;
#endif
}

static inline void resume_fiber(Block* B, Fiber* f) {
  tls_fiber = f;
#ifdef HP_EMU_USE_UCONTEXT
  swapcontext(&B->sched_ctx, &f->ctx);
#else
  hp_emu_switch(&B->sched_sp, f->sp);
#endif
}

static const char* state_name(int s) {
  switch (s) {
    case RUN: return "running";
    case AT_BLOCK_BAR: return "__syncthreads";
    case AT_WARP_BAR: return "warp intrinsic";
    default: return "exited";
  }
}

// Runs one block to completion. Returns 0, or -1 after set_error().
static int run_block(Block* B, int reverse) {
  const unsigned n = B->nthreads;
  Fiber* F = B->fibers;
  for (;;) {
    if (reverse) {
      for (unsigned i = n; i-- > 0;)
        if (F[i].state == RUN) resume_fiber(B, &F[i]);
    } else {
      for (unsigned i = 0; i < n; ++i)
        if (F[i].state == RUN) resume_fiber(B, &F[i]);
    }
    if (failed()) return -1;
    if (B->live == 0) return 0;
    bool released = false;
    if (B->at_bar == B->live) {
      // every waiting thread must be at the same __syncthreads() (CUDA: a barrier in
      // conditional code is only allowed if the condition is uniform across the block)
      const Fiber* ref = nullptr;
      for (unsigned i = 0; i < n; ++i) {
        if (F[i].state != AT_BLOCK_BAR) continue;
        if (!ref) { ref = &F[i]; continue; }
        if (F[i].bar_line != ref->bar_line ||
            (F[i].bar_file != ref->bar_file && std::strcmp(F[i].bar_file, ref->bar_file) != 0)) {
          char buf[1024];
          std::snprintf(buf, sizeof buf,
                        "divergent __syncthreads() in block (%u,%u,%u): thread %u waits at %s:%d but "
                        "thread %u at %s:%d. All threads of a block must reach the same barrier.",
                        B->bidx.x, B->bidx.y, B->bidx.z, ref->linear, ref->bar_file, ref->bar_line,
                        F[i].linear, F[i].bar_file, F[i].bar_line);
          set_error(buf);
          return -1;
        }
      }
      B->sync_res = B->sync_acc;
      B->sync_acc = 0;
      B->at_bar = 0;
      for (unsigned i = 0; i < n; ++i)
        if (F[i].state == AT_BLOCK_BAR) F[i].state = RUN;
      released = true;
    } else {
      for (unsigned w = 0; w < B->nwarps; ++w) {
        Warp& W = B->warps[w];
        if (W.at_bar > 0 && W.at_bar == W.live) {
          W.at_bar = 0;
          unsigned lo = w * 32, hi = umin(n, lo + 32);
          for (unsigned i = lo; i < hi; ++i)
            if (F[i].state == AT_WARP_BAR) F[i].state = RUN;
          released = true;
        }
      }
    }
    if (!released) {
      char buf[512];
      unsigned cnt[4] = {0, 0, 0, 0};
      unsigned first[4] = {0, 0, 0, 0};
      for (unsigned i = 0; i < n; ++i) {
        if (cnt[F[i].state]++ == 0) first[F[i].state] = i;
      }
      std::snprintf(buf, sizeof buf,
                    "deadlock in block (%u,%u,%u): %u threads wait at __syncthreads (first: thread %u), "
                    "%u wait at a warp intrinsic (first: thread %u), %u exited. Every live thread of the "
                    "block must reach the same __syncthreads(), and every live lane of a warp the same "
                    "warp intrinsic (divergent barrier).",
                    B->bidx.x, B->bidx.y, B->bidx.z, cnt[AT_BLOCK_BAR], first[AT_BLOCK_BAR],
                    cnt[AT_WARP_BAR], first[AT_WARP_BAR], cnt[DONE]);
      (void)state_name;
      set_error(buf);
      return -1;
    }
  }
}

struct LaunchConfig {
  unsigned grid[3];
  unsigned block[3];
  unsigned long long shmem;
  int nworkers;
  void* const* stacks;        // one region per worker
  unsigned long long stack_size;
  unsigned long long guard;   // bytes of guard page before each stack
  int flags;                  // 1: reverse order, 2: poison dynamic shared memory
};

static int worker_loop(const LaunchConfig& cfg, int worker, unsigned long long* next,
                       RunFn run, void* ctx) {
  const unsigned bx = cfg.block[0], by = cfg.block[1], bz = cfg.block[2];
  const unsigned n = bx * by * bz;
  const unsigned long long gx = cfg.grid[0], gy = cfg.grid[1], gz = cfg.grid[2];
  const unsigned long long total = gx * gy * gz;
  WorkerScratch& S = tls_scratch;
  S.fibers.reserve(n);
  unsigned nwarps = (n + 31) / 32;
  S.warps.reserve(nwarps);
  S.dyn.reserve((size_t)cfg.shmem + 64);
  char* dyn = (char*)(((uintptr_t)S.dyn.data + 63) & ~(uintptr_t)63);
  char* base = (char*)cfg.stacks[worker];
  const unsigned long long stride = cfg.stack_size + cfg.guard;
  for (unsigned t = 0; t < n; ++t) {
    Fiber& f = S.fibers.data[t];
    f.tid.x = t % bx;
    f.tid.y = (t / bx) % by;
    f.tid.z = t / (bx * by);
    f.linear = t;
    f.warp = t / 32;
    f.lane = t % 32;
    f.stack_lo = base + t * stride + cfg.guard;
    // colour the stack tops (64-byte steps within a page) so that the stacks of consecutive
    // fibers do not all map to the same cache sets
    f.stack_hi = f.stack_lo + cfg.stack_size - (size_t)((t * 64u) % 4096u);
  }
  Block B;
  B.bdim = dim3(bx, by, bz);
  B.gdim = dim3((unsigned)gx, (unsigned)gy, (unsigned)gz);
  B.dyn = dyn;
  B.nthreads = n;
  B.fibers = S.fibers.data;
  B.warps = S.warps.data;
  B.nwarps = nwarps;
  B.run = run;
  B.ctx = ctx;
  Block* saved_block = tls_block;
  Fiber* saved_fiber = tls_fiber;
  tls_block = &B;
  tls_fiber = nullptr;
  int rc = 0;
  // alternate signal stack: a fiber that overflows its stack hits a guard page and the
  // handler needs a stack of its own
  stack_t alt, old_alt;
  const size_t alt_size = 64 * 1024;
  alt.ss_sp = std::malloc(alt_size);
  alt.ss_size = alt_size;
  alt.ss_flags = 0;
  bool alt_ok = alt.ss_sp && sigaltstack(&alt, &old_alt) == 0;
  sigjmp_buf jb;
  volatile int faulted = 0;
  if (sigsetjmp(jb, 1) != 0) {
    faulted = 1;
  } else {
    tls_jmp = &jb;
  }
  if (faulted) {
    tls_jmp = nullptr;
    char buf[512];
    Fiber* f = tls_fiber;
    unsigned long long lo = (unsigned long long)(uintptr_t)(f ? f->stack_lo : nullptr);
    unsigned long long fa = (unsigned long long)(uintptr_t)tls_fault_addr;
    bool stack_overflow = f && fa + cfg.guard + 8192 >= lo && fa < lo;
    std::snprintf(buf, sizeof buf,
                  "illegal memory access at address %p in block (%u,%u,%u), thread (%u,%u,%u)%s",
                  tls_fault_addr, B.bidx.x, B.bidx.y, B.bidx.z, f ? f->tid.x : 0u, f ? f->tid.y : 0u,
                  f ? f->tid.z : 0u,
                  stack_overflow ? ": fiber stack overflow (raise stack_size / HPHAWKES_EMULATOR_STACK)"
                                 : " (out-of-bounds index? EmulatorDevice(bounds_check=True) places a guard "
                                   "page after every buffer)");
    set_error(buf);
    rc = -1;
  }
  while (!faulted) {
    unsigned long long i = __atomic_fetch_add(next, 1ull, __ATOMIC_RELAXED);
    if (i >= total || failed()) break;
    B.bidx.x = (unsigned)(i % gx);
    B.bidx.y = (unsigned)((i / gx) % gy);
    B.bidx.z = (unsigned)(i / (gx * gy));
    B.live = n;
    B.at_bar = 0;
    B.sync_acc = 0;
    B.sync_res = 0;
    for (unsigned w = 0; w < nwarps; ++w) {
      Warp& W = B.warps[w];
      unsigned lanes = umin(32u, n - w * 32);
      W.live = (int)lanes;
      W.at_bar = 0;
      for (unsigned l = 0; l < 32; ++l) {
        W.present[l] = l < lanes;
        W.tag[0][l] = W.tag[1][l] = 0xFFFFFFFFu;
      }
    }
    if ((cfg.flags & 2) && cfg.shmem) std::memset(dyn, 0xFF, (size_t)cfg.shmem);
    for (unsigned t = 0; t < n; ++t) {
      Fiber& f = B.fibers[t];
      f.state = RUN;
      f.wops = 0;
      prepare_fiber(&f);
    }
    if (run_block(&B, cfg.flags & 1) != 0) { rc = -1; break; }
  }
  tls_jmp = nullptr;
  if (alt_ok) {
    if (old_alt.ss_flags & SS_DISABLE) {
      stack_t dis;
      dis.ss_sp = nullptr;
      dis.ss_size = 0;
      dis.ss_flags = SS_DISABLE;
      sigaltstack(&dis, nullptr);
    } else {
      sigaltstack(&old_alt, nullptr);
    }
  }
  std::free(alt.ss_sp);
  tls_block = saved_block;
  tls_fiber = saved_fiber;
  return rc;
}

struct WorkerArgs {
  LaunchState* state;
  const LaunchConfig* cfg;
  int worker;
  unsigned long long* next;
  RunFn run;
  void* ctx;
  int rc;
};
static void* worker_thread(void* p) {
  WorkerArgs* a = static_cast<WorkerArgs*>(p);
  LaunchState* saved = tls_launch;
  tls_launch = a->state;
  a->rc = worker_loop(*a->cfg, a->worker, a->next, a->run, a->ctx);
  tls_launch = saved;
  return nullptr;
}

static int launch_impl(const LaunchConfig& cfg, RunFn run, void* ctx);
static int launch(const LaunchConfig& cfg, RunFn run, void* ctx) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fault_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  pthread_mutex_lock(&g_sig_mutex);
  if (g_sig_users++ == 0) {
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
  }
  pthread_mutex_unlock(&g_sig_mutex);
  int rc = launch_impl(cfg, run, ctx);
  pthread_mutex_lock(&g_sig_mutex);
  if (--g_sig_users == 0) {
    sigaction(SIGSEGV, &g_old_segv, nullptr);
    sigaction(SIGBUS, &g_old_bus, nullptr);
  }
  pthread_mutex_unlock(&g_sig_mutex);
  return rc;
}
static int launch_impl(const LaunchConfig& cfg, RunFn run, void* ctx) {
  LaunchState state;
  state.failed = 0;
  state.err[0] = 0;
  tls_last_err[0] = 0;
  unsigned long long next = 0;
  const unsigned long long total =
      (unsigned long long)cfg.grid[0] * cfg.grid[1] * cfg.grid[2];
  int nw = cfg.nworkers < 1 ? 1 : cfg.nworkers;
  if ((unsigned long long)nw > total) nw = (int)total;
  if (nw <= 1) {
    WorkerArgs a{&state, &cfg, 0, &next, run, ctx, 0};
    worker_thread(&a);
    if (a.rc) std::snprintf(tls_last_err, sizeof tls_last_err, "%s", state.err);
    return a.rc;
  }
  WorkerArgs* args = static_cast<WorkerArgs*>(std::calloc((size_t)nw, sizeof(WorkerArgs)));
  pthread_t* th = static_cast<pthread_t*>(std::calloc((size_t)nw, sizeof(pthread_t)));
  bool* started = static_cast<bool*>(std::calloc((size_t)nw, sizeof(bool)));
  for (int w = 0; w < nw; ++w) args[w] = WorkerArgs{&state, &cfg, w, &next, run, ctx, 0};
  for (int w = 1; w < nw; ++w) started[w] = pthread_create(&th[w], nullptr, worker_thread, &args[w]) == 0;
  worker_thread(&args[0]);  // workers that failed to start leave their blocks to the others
  int rc = args[0].rc;
  for (int w = 1; w < nw; ++w) {
    if (started[w]) pthread_join(th[w], nullptr);
    if (args[w].rc) rc = args[w].rc;
  }
  std::free(args);
  std::free(th);
  std::free(started);
  if (rc) std::snprintf(tls_last_err, sizeof tls_last_err, "%s", state.err);
  return rc;
}

// ---- kernel signature description, read by emulator.py
template <class T>
struct ScalarCode {
  static constexpr char value =
      std::is_same<T, bool>::value ? '?'
      : std::is_floating_point<T>::value ? (sizeof(T) == 4 ? 'f' : sizeof(T) == 8 ? 'd' : 'x')
      : std::is_integral<T>::value
          ? (sizeof(T) == 1 ? (std::is_signed<T>::value ? 'b' : 'B')
             : sizeof(T) == 2 ? (std::is_signed<T>::value ? 'h' : 'H')
             : sizeof(T) == 4 ? (std::is_signed<T>::value ? 'i' : 'I')
             : sizeof(T) == 8 ? (std::is_signed<T>::value ? 'l' : 'L') : 'x')
      : std::is_void<T>::value ? 'v' : 'x';
};
template <class T>
static void append_code(char* s, size_t& pos) {
  typedef typename std::remove_cv<T>::type U;
  if (pos + 4 >= 512) return;
  if (pos) s[pos++] = ',';
  if (std::is_pointer<U>::value) {
    typedef typename std::remove_cv<typename std::remove_pointer<U>::type>::type P;
    s[pos++] = 'p';
    s[pos++] = std::is_pointer<P>::value ? 'x' : ScalarCode<P>::value;
  } else {
    s[pos++] = 's';
    s[pos++] = ScalarCode<U>::value;
  }
  s[pos] = 0;
}
template <class... A>
static const char* signature(void (*)(A...)) {
  static char buf[512];
  size_t pos = 0;
  buf[0] = 0;
  (append_code<A>(buf, pos), ...);
  return buf;
}

template <class... A, size_t... I>
static inline void call_kernel(void (*k)(A...), void** args, std::index_sequence<I...>) {
  k(*static_cast<typename std::remove_cv<A>::type*>(args[I])...);
}

template <class... A>
static int launch_kernel(void (*k)(A...), void** args, const unsigned* grid, const unsigned* block,
                         unsigned long long shmem, int nworkers, void* const* stacks,
                         unsigned long long stack_size, unsigned long long guard, int flags) {
  struct Ctx {
    void (*k)(A...);
    void** args;
  } c{k, args};
  LaunchConfig cfg;
  for (int i = 0; i < 3; ++i) {
    cfg.grid[i] = grid[i];
    cfg.block[i] = block[i];
  }
  cfg.shmem = shmem;
  cfg.nworkers = nworkers;
  cfg.stacks = stacks;
  cfg.stack_size = stack_size;
  cfg.guard = guard;
  cfg.flags = flags;
  return launch(
      cfg,
      [](void* p) {
        Ctx* cc = static_cast<Ctx*>(p);
        call_kernel(cc->k, cc->args, std::index_sequence_for<A...>{});
      },
      &c);
}

static inline const char* last_error() { return tls_last_err; }

// ---- warp exchange
static inline void warp_barrier(Fiber* f) {
  Block* B = tls_block;
  Warp& W = B->warps[f->warp];
  f->state = AT_WARP_BAR;
  W.at_bar++;
  yield_to_scheduler(f);
}

template <class T>
static inline T warp_exchange(T var, int src_lane, bool valid) {
  static_assert(sizeof(T) <= 8, "warp shuffle of types larger than 8 bytes is not supported");
  Fiber* f = tls_fiber;
  Warp& W = tls_block->warps[f->warp];
  unsigned op = f->wops++;
  unsigned p = op & 1u;
  unsigned long long bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  W.slot[p][f->lane] = bits;
  W.tag[p][f->lane] = op;
  warp_barrier(f);
  T r = var;  // source lane absent / exited before the exchange: own value (undefined on a GPU)
  if (valid && src_lane >= 0 && src_lane < 32 && W.tag[p][src_lane] == op) {
    unsigned long long b = W.slot[p][src_lane];
    std::memcpy(&r, &b, sizeof(T));
  }
  return r;
}

}  // namespace hp_emu

// ---------------------------------------------------------------- built-in variables
#define threadIdx (::hp_emu::tls_fiber->tid)
#define blockIdx (::hp_emu::tls_block->bidx)
#define blockDim (::hp_emu::tls_block->bdim)
#define gridDim (::hp_emu::tls_block->gdim)
static constexpr int warpSize = 32;

static inline void* hp_emu_dynamic_shared() { return ::hp_emu::tls_block->dyn; }

// ---------------------------------------------------------------- synchronisation
static inline void hp_emu_syncthreads(const char* file, int line) {
  hp_emu::Fiber* f = hp_emu::tls_fiber;
  hp_emu::Block* B = hp_emu::tls_block;
  f->state = hp_emu::AT_BLOCK_BAR;
  f->bar_file = file;
  f->bar_line = line;
  B->at_bar++;
  hp_emu::yield_to_scheduler(f);
}
static inline int hp_emu_syncthreads_count(int pred, const char* file, int line) {
  hp_emu::tls_block->sync_acc += pred ? 1 : 0;
  hp_emu_syncthreads(file, line);
  return (int)hp_emu::tls_block->sync_res;
}
static inline int hp_emu_syncthreads_and(int pred, const char* file, int line) {
  hp_emu::tls_block->sync_acc += pred ? 0 : 1;
  hp_emu_syncthreads(file, line);
  return hp_emu::tls_block->sync_res == 0;
}
static inline int hp_emu_syncthreads_or(int pred, const char* file, int line) {
  hp_emu::tls_block->sync_acc += pred ? 1 : 0;
  hp_emu_syncthreads(file, line);
  return hp_emu::tls_block->sync_res != 0;
}
// Macros so that each barrier knows its source position (divergent barriers are reported).
#define __syncthreads() hp_emu_syncthreads(__FILE__, __LINE__)
#define __syncthreads_count(p) hp_emu_syncthreads_count((p), __FILE__, __LINE__)
#define __syncthreads_and(p) hp_emu_syncthreads_and((p), __FILE__, __LINE__)
#define __syncthreads_or(p) hp_emu_syncthreads_or((p), __FILE__, __LINE__)
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)mask;
  hp_emu::warp_barrier(hp_emu::tls_fiber);
}

// ---------------------------------------------------------------- warp intrinsics
template <class T>
static inline T __shfl_sync(unsigned mask, T var, int src, int width = 32) {
  (void)mask;
  unsigned lane = hp_emu::tls_fiber->lane;
  int seg = (int)(lane & ~(unsigned)(width - 1));
  return hp_emu::warp_exchange(var, seg + (src & (width - 1)), true);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  (void)mask;
  unsigned lane = hp_emu::tls_fiber->lane;
  int seg = (int)(lane & ~(unsigned)(width - 1));
  int src = (int)(lane + delta);
  return hp_emu::warp_exchange(var, src, src < seg + width);
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  (void)mask;
  unsigned lane = hp_emu::tls_fiber->lane;
  int seg = (int)(lane & ~(unsigned)(width - 1));
  int src = (int)lane - (int)delta;
  return hp_emu::warp_exchange(var, src, src >= seg);
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  (void)mask;
  unsigned lane = hp_emu::tls_fiber->lane;
  int seg = (int)(lane & ~(unsigned)(width - 1));
  int src = (int)(lane ^ (unsigned)lane_mask);
  return hp_emu::warp_exchange(var, src, src >= seg && src < seg + width);
}
static inline unsigned __ballot_sync(unsigned mask, int pred) {
  (void)mask;
  hp_emu::Fiber* f = hp_emu::tls_fiber;
  hp_emu::Warp& W = hp_emu::tls_block->warps[f->warp];
  unsigned op = f->wops++;
  unsigned p = op & 1u;
  W.slot[p][f->lane] = pred ? 1ull : 0ull;
  W.tag[p][f->lane] = op;
  hp_emu::warp_barrier(f);
  unsigned r = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (W.tag[p][l] == op && W.slot[p][l]) r |= 1u << l;
  return r;
}
static inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
static inline int __all_sync(unsigned mask, int pred) {
  hp_emu::Fiber* f = hp_emu::tls_fiber;
  (void)f;
  int notall = __ballot_sync(mask, !pred) != 0;
  return !notall;
}
static inline unsigned __activemask() {
  hp_emu::Fiber* f = hp_emu::tls_fiber;
  hp_emu::Warp& W = hp_emu::tls_block->warps[f->warp];
  unsigned r = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (W.present[l]) r |= 1u << l;
  return r;
}

// ---------------------------------------------------------------- atomics
// Real atomics: blocks may execute concurrently on several OS threads.
#define HP_EMU_ATOMIC_INT(T)                                                                       \
  static inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }      \
  static inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }      \
  static inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }    \
  static inline T atomicMax(T* a, T v) {                                                           \
    T old = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                  \
    while (old < v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST,            \
                                                   __ATOMIC_SEQ_CST)) {                            \
    }                                                                                              \
    return old;                                                                                    \
  }                                                                                                \
  static inline T atomicMin(T* a, T v) {                                                           \
    T old = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                  \
    while (old > v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST,            \
                                                   __ATOMIC_SEQ_CST)) {                            \
    }                                                                                              \
    return old;                                                                                    \
  }                                                                                                \
  static inline T atomicCAS(T* a, T compare, T v) {                                                \
    T expected = compare;                                                                          \
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
    return expected;                                                                               \
  }                                                                                                \
  static inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }      \
  static inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }        \
  static inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }
HP_EMU_ATOMIC_INT(int)
HP_EMU_ATOMIC_INT(unsigned int)
HP_EMU_ATOMIC_INT(unsigned long long)
#undef HP_EMU_ATOMIC_INT
// CUDA has atomicMax/atomicMin for long long but no atomicAdd(long long*).
static inline long long atomicMax(long long* a, long long v) {
  long long old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
  while (old < v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
static inline long long atomicMin(long long* a, long long v) {
  long long old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
  while (old > v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
static inline unsigned int atomicInc(unsigned int* a, unsigned int v) {
  unsigned int old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(a, &old, (old >= v) ? 0u : old + 1u, false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST)) {
  }
  return old;
}
static inline unsigned int atomicDec(unsigned int* a, unsigned int v) {
  unsigned int old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(a, &old, (old == 0u || old > v) ? v : old - 1u, false,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <class F, class B>
static inline F hp_emu_atomic_add_fp(F* a, F v) {
  static_assert(sizeof(F) == sizeof(B), "size");
  B* ab = reinterpret_cast<B*>(a);
  B old = __atomic_load_n(ab, __ATOMIC_SEQ_CST);
  for (;;) {
    F of;
    std::memcpy(&of, &old, sizeof(F));
    F nf = of + v;
    B nb;
    std::memcpy(&nb, &nf, sizeof(F));
    if (__atomic_compare_exchange_n(ab, &old, nb, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return of;
  }
}
static inline float atomicAdd(float* a, float v) { return hp_emu_atomic_add_fp<float, uint32_t>(a, v); }
static inline double atomicAdd(double* a, double v) { return hp_emu_atomic_add_fp<double, uint64_t>(a, v); }
static inline float atomicExch(float* a, float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  uint32_t o = __atomic_exchange_n(reinterpret_cast<uint32_t*>(a), b, __ATOMIC_SEQ_CST);
  float r;
  std::memcpy(&r, &o, 4);
  return r;
}

// ---------------------------------------------------------------- math
using std::abs;
using std::acos; using std::acosh; using std::asin; using std::asinh;
using std::atan; using std::atan2; using std::atanh; using std::cbrt; using std::ceil;
using std::copysign; using std::cos; using std::cosh; using std::erf; using std::erfc;
using std::exp; using std::exp2; using std::expm1; using std::fabs; using std::fdim;
using std::floor; using std::fma; using std::fmax; using std::fmin; using std::fmod;
using std::hypot; using std::isfinite; using std::isinf; using std::isnan; using std::lgamma;
using std::llrint; using std::llround; using std::log; using std::log10; using std::log1p;
using std::log2; using std::lrint; using std::lround; using std::nearbyint; using std::pow;
using std::remainder; using std::rint; using std::round; using std::signbit; using std::sin;
using std::sinh; using std::sqrt; using std::tan; using std::tanh; using std::tgamma;
using std::trunc;

static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
static inline double normcdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
static inline float normcdff(float x) { return 0.5f * std::erfc(-x * 0.70710678118654752440f); }
// glibc declares its own __expf etc.; route CUDA's fast intrinsics through macros.
static inline float hp_emu_expf(float x) { return std::exp(x); }
static inline float hp_emu_logf(float x) { return std::log(x); }
static inline float hp_emu_log2f(float x) { return std::log2(x); }
static inline float hp_emu_sinf(float x) { return std::sin(x); }
static inline float hp_emu_cosf(float x) { return std::cos(x); }
static inline float hp_emu_powf(float x, float y) { return std::pow(x, y); }
#define __expf hp_emu_expf
#define __logf hp_emu_logf
#define __log2f hp_emu_log2f
#define __sinf hp_emu_sinf
#define __cosf hp_emu_cosf
#define __powf hp_emu_powf
static inline float __fdividef(float x, float y) { return x / y; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
static inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
static inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
// sincos, sincosf, exp10, fminf, fmaxf, expf, logf, erfcf ... come from glibc's math.h.
static inline int __double2int_rn(double x) { return (int)std::nearbyint(x); }
static inline int __float2int_rn(float x) { return (int)std::nearbyint(x); }
static inline int __double2int_rz(double x) { return (int)x; }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __double2int_rd(double x) { return (int)std::floor(x); }
static inline int __double2int_ru(double x) { return (int)std::ceil(x); }
static inline int __float2int_rd(float x) { return (int)std::floor(x); }
static inline int __float2int_ru(float x) { return (int)std::ceil(x); }
static inline long long __double2ll_rn(double x) { return (long long)std::nearbyint(x); }
static inline float __int_as_float(int x) { float r; std::memcpy(&r, &x, 4); return r; }
static inline int __float_as_int(float x) { int r; std::memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned x) { float r; std::memcpy(&r, &x, 4); return r; }
static inline unsigned __float_as_uint(float x) { unsigned r; std::memcpy(&r, &x, 4); return r; }
static inline double __longlong_as_double(long long x) { double r; std::memcpy(&r, &x, 8); return r; }
static inline long long __double_as_longlong(double x) { long long r; std::memcpy(&r, &x, 8); return r; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
template <class T>
static inline T __ldg(const T* p) { return *p; }

// min / max overloads as provided by CUDA
#define HP_EMU_MINMAX(T)                                   \
  static inline T min(T a, T b) { return a < b ? a : b; } \
  static inline T max(T a, T b) { return a > b ? a : b; }
HP_EMU_MINMAX(int)
HP_EMU_MINMAX(unsigned int)
HP_EMU_MINMAX(long)
HP_EMU_MINMAX(unsigned long)
HP_EMU_MINMAX(long long)
HP_EMU_MINMAX(unsigned long long)
#undef HP_EMU_MINMAX
static inline float min(float a, float b) { return std::fmin(a, b); }
static inline float max(float a, float b) { return std::fmax(a, b); }
static inline double min(double a, double b) { return std::fmin(a, b); }
static inline double max(double a, double b) { return std::fmax(a, b); }
static inline double min(float a, double b) { return std::fmin((double)a, b); }
static inline double max(float a, double b) { return std::fmax((double)a, b); }
static inline double min(double a, float b) { return std::fmin(a, (double)b); }
static inline double max(double a, float b) { return std::fmax(a, (double)b); }
static inline unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
static inline unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
static inline unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
static inline unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }

// CUDA's printf works as the host printf (output order follows the emulated schedule).

#endif  // HP_CUDA_EMULATOR_H
