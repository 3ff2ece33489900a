/* A TEST DOUBLE of the HIP runtime (libamdhip64.so) for AsmEvo's hip device tests: no GPU, no ROCm.
 *
 * It exports the C symbols hip-python binds for the calls asmevo/device/hip.py makes, logs every call
 * (one line each, appended to $ASMEVO_STUB_LOG so a killed process leaves its log), keeps "device"
 * memory in host memory (copies are real memcpy; fills, which AsmEvo uses only to evict caches, are modelled
 * in time and not written, so a 512 MiB flush costs nothing here), and models one serial timeline per
 * stream: an operation starts when the stream is free and when the host enqueued it, a kernel lasts
 * $ASMEVO_STUB_KERNEL_NS nanoseconds (a comma-separated list: one entry per module in load order, the
 * last repeating; unset: the kernel's host run time), a fill lasts bytes * $ASMEVO_STUB_FILL_PS_PER_BYTE
 * picoseconds (default 1), and an event's time is when the work before it on its stream ends.
 * Synchronising waits (sleeps) until the modelled time has passed on the host clock.
 *
 * Kernels: `relu_f32` (kernargs: x at 0, y at 8, int32 n at 16) computes y = x > 0 ? x : 0; every other
 * kernel leaves memory alone. $ASMEVO_STUB_FAULT=name:k raises SIGSEGV on the k-th launch of `name`
 * in this process; $ASMEVO_STUB_HANG=name:k makes that launch never finish (synchronising never returns);
 * $ASMEVO_STUB_WRONG=k makes the k-th module loaded in this process compute y[0] wrong.
 * Other knobs: $ASMEVO_STUB_GPUS (device count, default 1; 0 gives hipErrorNoDevice from hipInit),
 * $ASMEVO_STUB_ARCH (gcnArchName, default gfx942:sramecc+:xnack-), $ASMEVO_STUB_HIP_VERSION (what
 * hipRuntimeGetVersion reports, default 70253211). Like ROCm 6.x clr, launches with gridDimY or gridDimZ
 * above 65536 fail with hipErrorInvalidValue.
 *
 * The structure layout below is hipDeviceProp_tR0600 as hip-python's chip.pxd declares it; the tests
 * check its size against hip-python's.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int hipError_t;
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorInvalidDevice = 101, hipErrorNoDevice = 100,
       hipErrorInvalidImage = 200, hipErrorInvalidHandle = 400, hipErrorNotFound = 500 };

typedef struct { char bytes[16]; } hipUUID;
typedef struct {
  unsigned hasGlobalInt32Atomics : 1, hasGlobalFloatAtomicExch : 1, hasSharedInt32Atomics : 1,
      hasSharedFloatAtomicExch : 1, hasFloatAtomicAdd : 1, hasGlobalInt64Atomics : 1, hasSharedInt64Atomics : 1,
      hasDoubles : 1, hasWarpVote : 1, hasWarpBallot : 1, hasWarpShuffle : 1, hasFunnelShift : 1,
      hasThreadFenceSystem : 1, hasSyncThreadsExt : 1, hasSurfaceFuncs : 1, has3dGrid : 1, hasDynamicParallelism : 1;
} hipDeviceArch_t;
typedef struct {
  char name[256]; hipUUID uuid; char luid[8]; unsigned luidDeviceNodeMask;
  size_t totalGlobalMem, sharedMemPerBlock; int regsPerBlock, warpSize; size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate; size_t totalConstMem; int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
  int maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2], maxTexture2DMipmap[2],
      maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap,
      maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2];
  int maxSurface1D, maxSurface2D[2], maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3],
      maxSurfaceCubemap, maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount,
      unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize,
      maxThreadsPerMultiProcessor, streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID, hostNativeAtomicSupported,
      singleToDoublePrecisionPerfRatio, pageableMemoryAccess, concurrentManagedAccess, computePreemptionSupported,
      canUseHostPointerForRegisteredMem, cooperativeLaunch, cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost, maxBlocksPerMultiProcessor,
      accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported, sparseHipArraySupported, hostRegisterReadOnlySupported,
      timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
  unsigned gpuDirectRDMAFlushWritesOptions; int gpuDirectRDMAWritesOrdering; unsigned memoryPoolSupportedHandleTypes;
  int deferredMappingHipArraySupported, ipcEventSupported, clusterLaunch, unifiedFunctionPointers;
  int reserved[63], hipReserved[32];
  char gcnArchName[256]; size_t maxSharedMemoryPerMultiProcessor; int clockInstructionRate; hipDeviceArch_t arch;
  unsigned *hdpMemFlushCntl, *hdpRegFlushCntl;
  int cooperativeMultiDeviceUnmatchedFunc, cooperativeMultiDeviceUnmatchedGridDim,
      cooperativeMultiDeviceUnmatchedBlockDim, cooperativeMultiDeviceUnmatchedSharedMem, isLargeBar, asicRevision;
} hipDeviceProp_t;

size_t stub_device_prop_size(void) { return sizeof(hipDeviceProp_t); }

/* ---- log ---------------------------------------------------------------------------------------- */
static void say(const char *fmt, ...) {
  const char *path = getenv("ASMEVO_STUB_LOG");
  if (!path) return;
  char line[8192];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > (int)sizeof line - 2) n = sizeof line - 2;
  line[n++] = '\n';
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, n);
  (void)ignored;
  close(fd);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wait_until(int64_t t) {
  while (now_ns() < t) {
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

static void hang_forever(void) {
  for (;;) pause();
}

static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}

/* ---- objects ------------------------------------------------------------------------------------ */
typedef struct { int id; int64_t busy_until; int hung; } Stream;
typedef struct { int id; int64_t time; int recorded; Stream *stream; } Event;
typedef struct { int id, ordinal; size_t size; uint64_t fnv; int loaded; } Module;
typedef struct { Module *module; char name[256]; } Function;

static Stream null_stream = {0, 0, 0};
static int next_id = 1, modules_loaded = 0;
static __thread int current_device = 0;

#define MAX_ALLOCS 4096
static struct { char *ptr; size_t size; } allocs[MAX_ALLOCS];

static int find_alloc(const void *p, size_t n) {
  for (int i = 0; i < MAX_ALLOCS; ++i)
    if (allocs[i].ptr && (const char *)p >= allocs[i].ptr && (const char *)p + n <= allocs[i].ptr + allocs[i].size)
      return i;
  return -1;
}

static Stream *stream_of(void *s) { return s ? (Stream *)s : &null_stream; }

static void hex(char *out, const unsigned char *data, size_t n) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 15];
  }
  out[2 * n] = 0;
}

/* ---- device management -------------------------------------------------------------------------- */
hipError_t hipInit(unsigned flags) {
  say("hipInit flags=%u", flags);
  if (env_int("ASMEVO_STUB_GPUS", 1) == 0) return hipErrorNoDevice;
  return hipSuccess;
}

hipError_t hipGetDeviceCount(int *count) {
  *count = env_int("ASMEVO_STUB_GPUS", 1);
  say("hipGetDeviceCount -> %d", *count);
  return *count ? hipSuccess : hipErrorNoDevice;
}

hipError_t hipSetDevice(int dev) {
  say("hipSetDevice %d", dev);
  if (dev < 0 || dev >= env_int("ASMEVO_STUB_GPUS", 1)) return hipErrorInvalidDevice;
  current_device = dev;
  return hipSuccess;
}

hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_t *p, int dev) {
  say("hipGetDeviceProperties %d", dev);
  if (dev < 0 || dev >= env_int("ASMEVO_STUB_GPUS", 1)) return hipErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "AMD Instinct MI300X (stub)");
  const char *arch = getenv("ASMEVO_STUB_ARCH");
  snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", arch && *arch ? arch : "gfx942:sramecc+:xnack-");
  p->totalGlobalMem = (size_t)192 << 30;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65536;
  p->maxGridSize[2] = 65536;
  p->maxThreadsPerBlock = 1024;
  p->warpSize = 64;
  p->multiProcessorCount = 304;
  p->clockRate = 2100000;
  p->l2CacheSize = 4 << 20;
  p->pciDomainID = 0;
  p->pciBusID = 0x10 + dev;
  p->major = 9;
  p->minor = 4;
  return hipSuccess;
}

hipError_t hipDeviceGetPCIBusId(char *out, int len, int dev) {
  say("hipDeviceGetPCIBusId %d", dev);
  if (dev < 0 || dev >= env_int("ASMEVO_STUB_GPUS", 1)) return hipErrorInvalidDevice;
  snprintf(out, len, "0000:%02x:00.0", 0x10 + dev);
  return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int *v) {
  *v = env_int("ASMEVO_STUB_HIP_VERSION", 70253211);
  say("hipRuntimeGetVersion -> %d", *v);
  return hipSuccess;
}

hipError_t hipDriverGetVersion(int *v) {
  *v = env_int("ASMEVO_STUB_HIP_VERSION", 70253211);
  say("hipDriverGetVersion -> %d", *v);
  return hipSuccess;
}

const char *hipGetErrorString(hipError_t e) {
  switch (e) {
    case hipSuccess: return "no error";
    case hipErrorInvalidValue: return "invalid argument";
    case hipErrorNoDevice: return "no ROCm-capable device is detected";
    default: return "stub error";
  }
}

/* ---- modules ------------------------------------------------------------------------------------ */
hipError_t hipModuleLoadData(Module **out, const void *image) {
  const Elf64_Ehdr *h = image;
  if (!image || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0) {
    say("hipModuleLoadData bad-image");
    return hipErrorInvalidImage;
  }
  Module *m = calloc(1, sizeof *m);
  m->id = next_id++;
  m->ordinal = ++modules_loaded;
  m->size = h->e_shoff + (size_t)h->e_shnum * h->e_shentsize;
  m->fnv = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis */
  for (size_t i = 0; i < m->size; ++i) m->fnv = (m->fnv ^ ((const unsigned char *)image)[i]) * 1099511628211ULL;
  m->loaded = 1;
  *out = m;
  say("hipModuleLoadData m%d size=%zu fnv=%016llx device=%d", m->id, m->size, (unsigned long long)m->fnv,
      current_device);
  return hipSuccess;
}

hipError_t hipModuleGetFunction(Function **out, Module *m, const char *name) {
  if (!m || !m->loaded) return hipErrorInvalidHandle;
  Function *f = calloc(1, sizeof *f);
  f->module = m;
  snprintf(f->name, sizeof f->name, "%s", name);
  *out = f;
  say("hipModuleGetFunction m%d %s", m->id, name);
  return hipSuccess;
}

hipError_t hipModuleUnload(Module *m) {
  if (!m || !m->loaded) {
    say("hipModuleUnload invalid");
    return hipErrorInvalidHandle;
  }
  m->loaded = 0;
  say("hipModuleUnload m%d", m->id);
  return hipSuccess;
}

/* ---- memory ------------------------------------------------------------------------------------- */
hipError_t hipMalloc(void **p, size_t size) {
  for (int i = 0; i < MAX_ALLOCS; ++i) {
    if (!allocs[i].ptr) {
      allocs[i].ptr = aligned_alloc(256, (size + 255) / 256 * 256);
      if (!allocs[i].ptr) return hipErrorInvalidValue;
      allocs[i].size = size;
      *p = allocs[i].ptr;
      say("hipMalloc %p size=%zu", *p, size);
      return hipSuccess;
    }
  }
  return hipErrorInvalidValue;
}

hipError_t hipFree(void *p) {
  int i = find_alloc(p, 0);
  if (i < 0 || allocs[i].ptr != p) {
    say("hipFree invalid %p", p);
    return hipErrorInvalidValue;
  }
  say("hipFree %p", p);
  free(allocs[i].ptr);
  allocs[i].ptr = NULL;
  return hipSuccess;
}

hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind) {
  say("hipMemcpy kind=%d bytes=%zu dst=%p src=%p", kind, n, dst, src);
  if ((kind == 1 && find_alloc(dst, n) < 0) || (kind == 2 && find_alloc(src, n) < 0)) return hipErrorInvalidValue;
  wait_until(null_stream.busy_until);
  memcpy(dst, src, n);
  return hipSuccess;
}

hipError_t hipMemsetAsync(void *dst, int value, size_t n, Stream *s) {
  Stream *st = stream_of(s);
  say("hipMemsetAsync %p value=%d bytes=%zu stream=%d", dst, value, n, st->id);
  if (find_alloc(dst, n) < 0) return hipErrorInvalidValue;
  int64_t start = now_ns() > st->busy_until ? now_ns() : st->busy_until;
  st->busy_until = start + (int64_t)n * env_int("ASMEVO_STUB_FILL_PS_PER_BYTE", 1) / 1000;
  return hipSuccess;
}

/* ---- streams and events ------------------------------------------------------------------------- */
hipError_t hipStreamCreate(Stream **out) {
  Stream *s = calloc(1, sizeof *s);
  s->id = next_id++;
  *out = s;
  say("hipStreamCreate s%d", s->id);
  return hipSuccess;
}

hipError_t hipStreamDestroy(Stream *s) {
  say("hipStreamDestroy s%d", s ? s->id : 0);
  if (!s) return hipErrorInvalidHandle;
  free(s);
  return hipSuccess;
}

hipError_t hipStreamSynchronize(Stream *s) {
  Stream *st = stream_of(s);
  say("hipStreamSynchronize s%d", st->id);
  if (st->hung) hang_forever();
  wait_until(st->busy_until);
  return hipSuccess;
}

hipError_t hipEventCreate(Event **out) {
  Event *e = calloc(1, sizeof *e);
  e->id = next_id++;
  *out = e;
  say("hipEventCreate e%d", e->id);
  return hipSuccess;
}

hipError_t hipEventDestroy(Event *e) {
  say("hipEventDestroy e%d", e ? e->id : 0);
  if (!e) return hipErrorInvalidHandle;
  free(e);
  return hipSuccess;
}

hipError_t hipEventRecord(Event *e, Stream *s) {
  Stream *st = stream_of(s);
  if (!e) return hipErrorInvalidHandle;
  int64_t t = now_ns();
  e->time = t > st->busy_until ? t : st->busy_until;
  e->recorded = 1;
  e->stream = st;
  say("hipEventRecord e%d stream=%d", e->id, st->id);
  return hipSuccess;
}

hipError_t hipEventSynchronize(Event *e) {
  say("hipEventSynchronize e%d", e ? e->id : 0);
  if (!e || !e->recorded) return hipErrorInvalidHandle;
  if (e->stream->hung) hang_forever();
  wait_until(e->time);
  return hipSuccess;
}

hipError_t hipEventElapsedTime(float *ms, Event *a, Event *b) {
  if (!a || !b || !a->recorded || !b->recorded) return hipErrorInvalidHandle;
  *ms = (float)((double)(b->time - a->time) / 1e6);
  say("hipEventElapsedTime e%d e%d -> %.6f", a->id, b->id, *ms);
  return hipSuccess;
}

/* ---- launches ----------------------------------------------------------------------------------- */
static int launches_of(const char *name, const char *knob) {
  /* The launch index `k` if $knob is "name:k" for this kernel name, else 0. */
  const char *v = getenv(knob);
  if (!v) return 0;
  const char *colon = strrchr(v, ':');
  if (!colon || (size_t)(colon - v) != strlen(name) || strncmp(v, name, colon - v) != 0) return 0;
  return atoi(colon + 1);
}

static int64_t kernel_ns(int ordinal) {
  /* The modelled duration of a kernel of the `ordinal`-th loaded module, or -1 (use the host time). */
  const char *v = getenv("ASMEVO_STUB_KERNEL_NS");
  if (!v || !*v) return -1;
  int64_t value = -1;
  for (int i = 1; *v; ++i) {
    value = strtoll(v, (char **)&v, 10);
    if (i == ordinal || *v != ',') break;
    ++v;
  }
  return value;
}

static void relu_f32(const unsigned char *kernarg, size_t size, int wrong) {
  if (size < 20) return;
  float *x, *y;
  int n;
  memcpy(&x, kernarg, 8);
  memcpy(&y, kernarg + 8, 8);
  memcpy(&n, kernarg + 16, 4);
  if (n < 0 || find_alloc(x, (size_t)n * 4) < 0 || find_alloc(y, (size_t)n * 4) < 0) raise(SIGSEGV);
  for (int i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  if (wrong && n > 0) y[0] = 12345.0f;
}

hipError_t hipModuleLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shmem, Stream *s, void **params, void **extra) {
  static int counts[64];
  static char names[64][256];
  Stream *st = stream_of(s);
  const unsigned char *kernarg = NULL;
  size_t size = 0;
  if (extra) {
    if ((intptr_t)extra[0] != 1 || (intptr_t)extra[2] != 2 || (intptr_t)extra[4] != 3) return hipErrorInvalidValue;
    kernarg = extra[1];
    size = *(size_t *)extra[3];
  }
  static char text[2 * 4096 + 1];
  hex(text, kernarg ? kernarg : (const unsigned char *)"", size < 4096 ? size : 4096);
  say("hipModuleLaunchKernel %s m%d grid=%u,%u,%u block=%u,%u,%u shmem=%u stream=%d params=%s extra=%s size=%zu "
      "kernarg=%s", f ? f->name : "?", f ? f->module->id : 0, gx, gy, gz, bx, by, bz, shmem, st->id,
      params ? "set" : "null", extra ? "set" : "null", size, text);
  if (!f || !f->module->loaded) return hipErrorInvalidHandle;
  if (gy > 65536 || gz > 65536) return hipErrorInvalidValue;
  int slot = 0;
  while (slot < 63 && names[slot][0] && strcmp(names[slot], f->name) != 0) ++slot;
  snprintf(names[slot], sizeof names[slot], "%s", f->name);
  int k = ++counts[slot];
  if (launches_of(f->name, "ASMEVO_STUB_FAULT") == k) {
    say("stub: SIGSEGV in launch %d of %s", k, f->name);
    raise(SIGSEGV);
  }
  if (launches_of(f->name, "ASMEVO_STUB_HANG") == k) {
    say("stub: launch %d of %s never finishes", k, f->name);
    st->hung = 1;
    return hipSuccess;
  }
  int64_t t0 = now_ns();
  if (strcmp(f->name, "relu_f32") == 0)
    relu_f32(kernarg, size, env_int("ASMEVO_STUB_WRONG", 0) == f->module->ordinal);
  int64_t ran = now_ns() - t0;
  int64_t modelled = kernel_ns(f->module->ordinal);
  int64_t start = t0 > st->busy_until ? t0 : st->busy_until;
  st->busy_until = start + (modelled >= 0 ? modelled : ran);
  return hipSuccess;
}
