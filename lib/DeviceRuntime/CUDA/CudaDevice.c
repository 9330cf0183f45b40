/*===- CudaDevice.c - The CUDA calls of --target=cuda artifacts -----------===*
 *
 * Linked into every CUDA artifact (as lib/Kernels is into CPU ones). It
 * defines the `mgpu*` functions that MLIR's gpu-to-llvm lowering calls
 * (module loads from the artifact's constructors, allocations, copies,
 * launches) on top of the CUDA driver API, which it loads with dlopen: an
 * artifact (and the runtime that loads it) starts on a machine without
 * CUDA, and says so instead of failing to load.
 *
 * Errors never abort the process. The first one is kept (sticky) and every
 * later call does nothing, so a failed allocation cannot lead to a kernel
 * writing through a null pointer; the runtime asks for it after each call
 * (__tessel_cuda_take_error) and before the first
 * (__tessel_cuda_check), and reports it as the call's status.
 *===----------------------------------------------------------------------===*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver API subset, declared here: no CUDA header is needed to build
 * (the ABI of these entry points is stable across driver versions). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_STREAM_NON_BLOCKING = 1,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

#define CUDA_FUNCTIONS(X)                                                      \
  X(cuInit, (unsigned))                                                        \
  X(cuDeviceGetCount, (int *))                                                 \
  X(cuDeviceGet, (CUdevice *, int))                                            \
  X(cuDeviceGetAttribute, (int *, int, CUdevice))                              \
  X(cuDeviceGetName, (char *, int, CUdevice))                                  \
  X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                         \
  X(cuCtxSetCurrent, (CUcontext))                                              \
  X(cuGetErrorString, (CUresult, const char **))                               \
  X(cuModuleLoadData, (CUmodule *, const void *))                              \
  X(cuModuleLoadDataEx,                                                        \
    (CUmodule *, const void *, unsigned, int *, void **))                      \
  X(cuModuleUnload, (CUmodule))                                                \
  X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))               \
  X(cuLaunchKernel,                                                            \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(cuStreamCreate, (CUstream *, unsigned))                                    \
  X(cuStreamSynchronize, (CUstream))                                           \
  X(cuStreamWaitEvent, (CUstream, CUevent, unsigned))                          \
  X(cuEventCreate, (CUevent *, unsigned))                                      \
  X(cuEventRecord, (CUevent, CUstream))                                        \
  X(cuEventSynchronize, (CUevent))                                             \
  X(cuEventElapsedTime, (float *, CUevent, CUevent))                           \
  X(cuMemAlloc_v2, (CUdeviceptr *, size_t))                                    \
  X(cuMemFree_v2, (CUdeviceptr))                                               \
  X(cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))               \
  X(cuMemsetD32Async, (CUdeviceptr, unsigned, size_t, CUstream))              \
  X(cuMemsetD16Async, (CUdeviceptr, unsigned short, size_t, CUstream))

/* Names whose newest ABI has a suffix (cuda.h maps the plain names). */
#define CUDA_DESTROY_FUNCTIONS(X)                                              \
  X(cuStreamDestroy_v2, (CUstream))                                            \
  X(cuEventDestroy_v2, (CUevent))                                              \
  X(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream))                        \
  X(cuMemFreeAsync, (CUdeviceptr, CUstream))

/* Needed by some kernels only (Hopper's TMA, blocks with more than 48 KiB
 * of shared memory): an older driver fails those kernels, not every load. */
#define CUDA_OPTIONAL_FUNCTIONS(X)                                             \
  X(cuFuncSetAttribute, (CUfunction, int, int))                                \
  X(cuTensorMapEncodeTiled,                                                    \
    (void *, int, unsigned, void *, const uint64_t *, const uint64_t *,        \
     const unsigned *, const unsigned *, int, int, int, int))

#define DECLARE(name, args) static CUresult(*p_##name) args;
CUDA_FUNCTIONS(DECLARE)
CUDA_DESTROY_FUNCTIONS(DECLARE)
CUDA_OPTIONAL_FUNCTIONS(DECLARE)
#undef DECLARE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Why CUDA cannot be used at all (empty: it can). */
static char unavailable[512];
/* The first error of a call (sticky until taken). */
static char failed[1024];
static CUcontext context;
static CUdevice device;
static int deviceArch; /* major * 10 + minor */
static char deviceName[128];
static __thread CUstream threadStream;
/* Kernel timing (__tessel_cuda_timing): events around this thread's
 * launches of the current call, from the first launch's start to the last
 * one's end; copies before and after the kernels are not in the span. */
static int timing;
static __thread CUevent spanStart, spanEnd;
static __thread int spanOpen;
static __thread double lastKernelMs = -1;

static void setf(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, size, fmt, ap);
  va_end(ap);
}

static const char *errorName(CUresult r) {
  const char *s = NULL;
  if (p_cuGetErrorString && p_cuGetErrorString(r, &s) == 0 && s)
    return s;
  return "unknown CUDA error";
}

/* The device a load chose (__tessel_cuda_select), else -1: the
 * environment's or device 0; the ordinal in use once initialized. */
static int selectedOrdinal = -1, usedOrdinal = -1;

static void initialize(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    setf(unavailable, sizeof unavailable,
         "no CUDA driver: libcuda.so.1 cannot be loaded (%s); this artifact "
         "was compiled with --target=cuda and needs an NVIDIA GPU and its "
         "driver",
         why ? why : "not found");
    return;
  }
#define LOAD(name, args)                                                       \
  p_##name = (CUresult(*) args)dlsym(lib, #name);                              \
  if (!p_##name) {                                                             \
    setf(unavailable, sizeof unavailable,                                      \
         "the CUDA driver (libcuda.so.1) lacks %s: it is too old", #name);     \
    return;                                                                    \
  }
  CUDA_FUNCTIONS(LOAD)
  CUDA_DESTROY_FUNCTIONS(LOAD)
#undef LOAD
#define LOAD_OPTIONAL(name, args) p_##name = (CUresult(*) args)dlsym(lib, #name);
  CUDA_OPTIONAL_FUNCTIONS(LOAD_OPTIONAL)
#undef LOAD_OPTIONAL
  CUresult r = p_cuInit(0);
  int count = 0;
  if (r == 0)
    r = p_cuDeviceGetCount(&count);
  if (r != 0 || count == 0) {
    setf(unavailable, sizeof unavailable,
         "no CUDA device: the driver is present but reports %s",
         r != 0 ? errorName(r) : "no device");
    return;
  }
  int ordinal = 0;
  const char *env = getenv("TESSEL_CUDA_DEVICE");
  if (selectedOrdinal >= 0) {
    if (selectedOrdinal >= count) {
      setf(unavailable, sizeof unavailable,
           "device cuda:%d: this machine has CUDA devices 0..%d",
           selectedOrdinal, count - 1);
      return;
    }
    ordinal = selectedOrdinal;
  } else if (env && *env) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (*end || v < 0 || v >= count) {
      setf(unavailable, sizeof unavailable,
           "TESSEL_CUDA_DEVICE=%s: this machine has CUDA devices 0..%d", env,
           count - 1);
      return;
    }
    ordinal = (int)v;
  }
  int major = 0, minor = 0;
  if ((r = p_cuDeviceGet(&device, ordinal)) != 0 ||
      (r = p_cuDeviceGetAttribute(
           &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)) != 0 ||
      (r = p_cuDeviceGetAttribute(
           &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)) != 0 ||
      (r = p_cuDevicePrimaryCtxRetain(&context, device)) != 0) {
    setf(unavailable, sizeof unavailable, "cannot use CUDA device %d: %s",
         ordinal, errorName(r));
    return;
  }
  deviceArch = major * 10 + minor;
  pthread_mutex_lock(&lock);
  usedOrdinal = ordinal;
  pthread_mutex_unlock(&lock);
  if (p_cuDeviceGetName(deviceName, sizeof deviceName, device) != 0)
    strcpy(deviceName, "NVIDIA GPU");
}

/* Whether calls may go to the device (initialized, no pending error), with
 * this thread's context current. */
static int ready(void) {
  static __thread CUcontext current;
  pthread_once(&once, initialize);
  if (unavailable[0])
    return 0;
  pthread_mutex_lock(&lock);
  int ok = failed[0] == 0;
  pthread_mutex_unlock(&lock);
  if (ok && current != context) {
    CUresult r = p_cuCtxSetCurrent(context);
    if (r != 0) {
      pthread_mutex_lock(&lock);
      if (!failed[0])
        setf(failed, sizeof failed, "cuCtxSetCurrent: %s", errorName(r));
      pthread_mutex_unlock(&lock);
      return 0;
    }
    current = context;
  }
  return ok;
}

/* Records the first failure; returns whether `r` succeeded. */
static int check(CUresult r, const char *what) {
  if (r == 0)
    return 1;
  pthread_mutex_lock(&lock);
  if (!failed[0])
    setf(failed, sizeof failed, "%s failed: %s", what, errorName(r));
  pthread_mutex_unlock(&lock);
  return 0;
}

/* ---- The runtime's side ------------------------------------------------ */

/* Chooses the CUDA device this artifact's calls run on (a load's
 * --device=cuda:N), before the first device call; 0, else 1 and why. */
int __tessel_cuda_select(int ordinal, char *message, size_t size) {
  if (ordinal < 0) {
    setf(message, size, "device cuda:%d: not a device number", ordinal);
    return 1;
  }
  pthread_mutex_lock(&lock);
  int inUse = usedOrdinal;
  if (inUse < 0)
    selectedOrdinal = ordinal;
  pthread_mutex_unlock(&lock);
  if (inUse >= 0 && inUse != ordinal) {
    setf(message, size,
         "device cuda:%d: this artifact already runs on CUDA device %d",
         ordinal, inUse);
    return 1;
  }
  return 0;
}

/* 0 when the artifact can run here; else 1 and why, in `message`. `arch` is
 * the manifest's (sm_NN): the PTX runs on that architecture and newer. */
int __tessel_cuda_check(const char *arch, char *message, size_t size) {
  pthread_once(&once, initialize);
  if (unavailable[0]) {
    setf(message, size, "%s", unavailable);
    return 1;
  }
  int need = 0;
  char *suffix = NULL;
  if (arch && strncmp(arch, "sm_", 3) == 0)
    need = (int)strtol(arch + 3, &suffix, 10);
  /* sm_90a: architecture-specific PTX (wgmma, setmaxnreg) runs on that
   * architecture alone, not on newer ones. */
  int exact = suffix && *suffix == 'a';
  if (exact && need != deviceArch) {
    setf(message, size,
         "artifact built for %s, which runs on compute capability %d.%d "
         "only; device is sm_%d (%s): recompile with --cuda-arch=sm_%d",
         arch, need / 10, need % 10, deviceArch, deviceName, deviceArch);
    return 1;
  }
  if (need > deviceArch) {
    setf(message, size,
         "artifact built for %s, device is sm_%d (%s): recompile with "
         "--cuda-arch=sm_%d",
         arch, deviceArch, deviceName, deviceArch);
    return 1;
  }
  pthread_mutex_lock(&lock);
  int bad = failed[0] != 0;
  if (bad)
    setf(message, size, "%s", failed);
  pthread_mutex_unlock(&lock);
  return bad;
}

static void freeCallMaps(void);

/* 0 when every device call since the last one succeeded; else 1, the first
 * failure in `message`, and the error is cleared. */
int __tessel_cuda_take_error(char *message, size_t size) {
  /* The call is over and its stream waited for: its own tensor maps go. */
  freeCallMaps();
  pthread_mutex_lock(&lock);
  int bad = failed[0] != 0;
  if (bad) {
    setf(message, size, "%s", failed);
    failed[0] = 0;
  }
  pthread_mutex_unlock(&lock);
  return bad;
}

/* The device's name and architecture, for reports ("NVIDIA H100 sm_90"). */
const char *__tessel_cuda_device(void) {
  static char text[160];
  pthread_once(&once, initialize);
  if (unavailable[0])
    return "";
  setf(text, sizeof text, "%s sm_%d", deviceName, deviceArch);
  return text;
}

/* ---- MLIR's gpu-to-llvm interface (mlir/lib/ExecutionEngine/
 * CudaRuntimeWrappers.cpp declares the same signatures) ------------------ */

void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  CUmodule module = NULL;
  if (ready())
    check(p_cuModuleLoadData(&module, data), "loading the kernels (cubin)");
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = NULL;
  if (!ready())
    return NULL;
  char log[4096] = "";
  int options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {(void *)(intptr_t)optLevel, log,
                    (void *)(intptr_t)sizeof log};
  CUresult r = p_cuModuleLoadDataEx(&module, data, 3, options, values);
  if (r != 0) {
    pthread_mutex_lock(&lock);
    if (!failed[0])
      setf(failed, sizeof failed,
           "the driver cannot compile the artifact's PTX (%s)%s%s%s",
           errorName(r), log[0] ? ": " : "", log,
           " (a driver older than the PTX ISA it uses?)");
    pthread_mutex_unlock(&lock);
    return NULL;
  }
  return module;
}

void mgpuModuleUnload(void *module) {
  /* At dlclose: unload even after an error, never touch a lost driver. */
  if (module && !unavailable[0])
    p_cuModuleUnload((CUmodule)module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction fn = NULL;
  if (!ready())
    return NULL;
  if (!module) {
    check(1, "the kernels' module is not loaded");
    return NULL;
  }
  check(p_cuModuleGetFunction(&fn, (CUmodule)module, name), name);
  return fn;
}

/* Turns kernel timing on or off (off: no events are recorded). */
void __tessel_cuda_timing(int on) { timing = on; }

/* The kernels' time of this thread's last call in milliseconds (timing on),
 * else -1. */
double __tessel_cuda_last_kernel_ms(void) { return lastKernelMs; }

static void spanBegin(CUstream stream) {
  if (!timing || spanOpen)
    return;
  if (!spanStart && (!check(p_cuEventCreate(&spanStart, 0), "cuEventCreate") ||
                     !check(p_cuEventCreate(&spanEnd, 0), "cuEventCreate")))
    return;
  if (check(p_cuEventRecord(spanStart, stream), "cuEventRecord"))
    spanOpen = 1;
}

static void spanExtend(CUstream stream) {
  if (spanOpen)
    check(p_cuEventRecord(spanEnd, stream), "cuEventRecord");
}

/* At the call's final synchronization: the span's length. */
static void spanClose(void) {
  if (!spanOpen)
    return;
  spanOpen = 0;
  float ms = -1;
  if (check(p_cuEventSynchronize(spanEnd), "cuEventSynchronize") &&
      check(p_cuEventElapsedTime(&ms, spanStart, spanEnd),
            "cuEventElapsedTime"))
    lastKernelMs = ms;
}

void mgpuLaunchKernel(void *fn, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra,
                      size_t paramsCount) {
  (void)paramsCount;
  if (!ready() || !fn)
    return;
  if (gx > 0x7fffffff || gy > 65535 || gz > 65535) {
    check(1, "a kernel launch (grid too large)");
    return;
  }
  /* Above 48 KiB, a block's dynamic shared memory must be asked for. */
  if (smem > 48 * 1024) {
    if (!p_cuFuncSetAttribute) {
      check(1, "a kernel launch (the driver lacks cuFuncSetAttribute)");
      return;
    }
    if (!check(p_cuFuncSetAttribute(
                   (CUfunction)fn,
                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
               "reserving a kernel's shared memory"))
      return;
  }
  spanBegin((CUstream)stream);
  check(p_cuLaunchKernel((CUfunction)fn, (unsigned)gx, (unsigned)gy,
                         (unsigned)gz, (unsigned)bx, (unsigned)by,
                         (unsigned)bz, (unsigned)smem, (CUstream)stream,
                         params, extra),
        "a kernel launch");
  spanExtend((CUstream)stream);
}

/* One stream per thread, reused: the lowering creates and destroys one
 * around every operation. */
void *mgpuStreamCreate(void) {
  if (!ready())
    return NULL;
  if (!threadStream &&
      !check(p_cuStreamCreate(&threadStream, CU_STREAM_NON_BLOCKING),
             "cuStreamCreate"))
    return NULL;
  return threadStream;
}

void mgpuStreamDestroy(void *stream) { (void)stream; }

void mgpuStreamSynchronize(void *stream) {
  if (ready() && check(p_cuStreamSynchronize((CUstream)stream),
                       "a kernel or copy"))
    spanClose();
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  if (ready())
    check(p_cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0),
          "cuStreamWaitEvent");
}

void *mgpuEventCreate(void) {
  CUevent event = NULL;
  if (ready())
    check(p_cuEventCreate(&event, /*CU_EVENT_DISABLE_TIMING*/ 2),
          "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  if (event && !unavailable[0])
    p_cuEventDestroy_v2((CUevent)event);
}

void mgpuEventSynchronize(void *event) {
  if (ready() && event)
    check(p_cuEventSynchronize((CUevent)event), "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  if (ready() && event)
    check(p_cuEventRecord((CUevent)event, (CUstream)stream), "cuEventRecord");
}

/* Stream-ordered (CUDA 11.2's pool allocator): an allocation or free waits
 * for nothing but the work queued before it on the same stream. */
void *mgpuMemAlloc(uint64_t bytes, void *stream, _Bool hostShared) {
  CUdeviceptr ptr = 0;
  if (bytes == 0 || !ready())
    return NULL;
  if (hostShared) {
    check(1, "host-shared allocation (not supported)");
    return NULL;
  }
  CUresult r = stream ? p_cuMemAllocAsync(&ptr, bytes, (CUstream)stream)
                      : p_cuMemAlloc_v2(&ptr, bytes);
  if (!check(r, "allocating device memory"))
    return NULL;
  return (void *)(uintptr_t)ptr;
}

void mgpuMemFree(void *ptr, void *stream) {
  /* Freed even after an error: nothing else would free it. */
  if (!ptr || unavailable[0])
    return;
  if (stream)
    p_cuMemFreeAsync((CUdeviceptr)(uintptr_t)ptr, (CUstream)stream);
  else
    p_cuMemFree_v2((CUdeviceptr)(uintptr_t)ptr);
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (bytes && ready())
    check(p_cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                          (CUdeviceptr)(uintptr_t)src, bytes, (CUstream)stream),
          "a copy between host and device");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  if (count && ready())
    check(p_cuMemsetD32Async((CUdeviceptr)(uintptr_t)dst, value, count,
                             (CUstream)stream),
          "cuMemsetD32");
}

void mgpuMemset16(void *dst, int value, size_t count, void *stream) {
  if (count && ready())
    check(p_cuMemsetD16Async((CUdeviceptr)(uintptr_t)dst,
                             (unsigned short)value, count, (CUstream)stream),
          "cuMemsetD16");
}

void mgpuSetDefaultDevice(int32_t ordinal) { (void)ordinal; }

/* A new device buffer holding `bytes` of host memory, copied before it
 * returns (not stream-ordered: it outlives the call that made it); 0, with
 * the error recorded, on failure. `what` names the data in the message. */
static CUdeviceptr deviceCopy(const void *host, size_t bytes,
                              const char *what) {
  char message[96];
  CUdeviceptr ptr = 0;
  snprintf(message, sizeof message, "allocating device memory for %s", what);
  if (!check(p_cuMemAlloc_v2(&ptr, bytes), message))
    return 0;
  snprintf(message, sizeof message, "copying %s to the device", what);
  if (check(p_cuMemcpyAsync(ptr, (CUdeviceptr)(uintptr_t)host, bytes, NULL),
            message) &&
      check(p_cuStreamSynchronize(NULL), message))
    return ptr;
  p_cuMemFree_v2(ptr);
  return 0;
}

/* ---- Constants resident on the device (tessel-gpu-resident-constants) --- */

/* Device copies of the artifact's constants, keyed by their host address
 * (each loaded artifact has its own): made at the first call that needs
 * one, freed when the artifact is unloaded. */
typedef struct {
  const void *host;
  CUdeviceptr device;
} Resident;
static Resident *residents;
static size_t numResidents, capResidents;
static pthread_mutex_t residentLock = PTHREAD_MUTEX_INITIALIZER;

void *__tessel_cuda_constant(const void *host, int64_t bytes, void *stream) {
  if (!ready() || bytes <= 0)
    return NULL;
  pthread_mutex_lock(&residentLock);
  for (size_t i = 0; i < numResidents; ++i)
    if (residents[i].host == host) {
      void *found = (void *)(uintptr_t)residents[i].device;
      pthread_mutex_unlock(&residentLock);
      return found;
    }
  void *result = NULL;
  if (numResidents == capResidents) {
    size_t cap = capResidents ? 2 * capResidents : 64;
    Resident *grown = realloc(residents, cap * sizeof *grown);
    if (!grown) {
      check(1, "recording a resident constant (out of host memory)");
      pthread_mutex_unlock(&residentLock);
      return NULL;
    }
    residents = grown;
    capResidents = cap;
  }
  /* Not stream-ordered: the copy outlives this call's stream work. The
   * copy is made before any kernel of this call reads it (same stream
   * order is not needed: cuMemcpy completes before it returns). */
  (void)stream;
  CUdeviceptr ptr = deviceCopy(host, (size_t)bytes, "a constant");
  if (ptr) {
    residents[numResidents].host = host;
    residents[numResidents].device = ptr;
    ++numResidents;
    result = (void *)(uintptr_t)ptr;
  }
  pthread_mutex_unlock(&residentLock);
  return result;
}

/* At dlclose of the artifact (its constants' addresses die with it). */
__attribute__((destructor)) static void freeResidents(void) {
  if (!unavailable[0] && p_cuMemFree_v2)
    for (size_t i = 0; i < numResidents; ++i)
      p_cuMemFree_v2(residents[i].device);
  free(residents);
  residents = NULL;
  numResidents = capResidents = 0;
}

/* ---- TMA descriptors (nvgpu.tma.create.descriptor) ---------------------- */

/* Kernels read a tensor map from global memory. Encoded per call from the
 * buffer's address, sizes and strides (as MLIR's CUDA runtime wrappers do);
 * the device copies are kept, keyed by the encoded bytes, since the stream-
 * ordered allocator hands a model the same addresses call after call. Past
 * MAX_TENSOR_MAPS kept ones (addresses that keep changing), a new one lives
 * for the call that made it: freed when the call is over (its stream was
 * waited for), never while a kernel of it may still read it. */
typedef struct {
  _Alignas(64) uint64_t bytes[16];
} TensorMap;
typedef struct {
  TensorMap map;
  CUdeviceptr device;
} DeviceTensorMap;
static DeviceTensorMap *tensorMaps;
static size_t numTensorMaps, capTensorMaps;
static pthread_mutex_t tensorMapLock = PTHREAD_MUTEX_INITIALIZER;
enum { MAX_TENSOR_MAPS = 4096 };
/* This thread's current call's uncached tensor maps. */
static __thread CUdeviceptr *callMaps;
static __thread size_t numCallMaps, capCallMaps;

static void freeCallMaps(void) {
  if (p_cuMemFree_v2)
    for (size_t i = 0; i < numCallMaps; ++i)
      p_cuMemFree_v2(callMaps[i]);
  numCallMaps = 0;
}

static int64_t tensorMapElementBytes(int64_t type) {
  /* CUtensorMapDataType: u8, u16, u32, i32, u64, i64, f16, f32, f64, bf16,
   * f32 ftz, tf32, tf32 ftz. */
  static const int8_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return type >= 0 && type < (int64_t)sizeof bytes ? bytes[type] : 0;
}

void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *ranked, int64_t type,
                                     int64_t interleave, int64_t swizzle,
                                     int64_t l2promo, int64_t oob,
                                     int64_t *box) {
  if (!ready())
    return NULL;
  if (!p_cuTensorMapEncodeTiled) {
    check(1, "a TMA descriptor (the driver lacks cuTensorMapEncodeTiled: "
             "CUDA 12 or newer is needed)");
    return NULL;
  }
  int64_t elementBytes = tensorMapElementBytes(type);
  if (rank < 1 || rank > 5 || elementBytes == 0) {
    check(1, "a TMA descriptor (unsupported rank or element type)");
    return NULL;
  }
  /* The ranked descriptor: allocated, aligned, offset, sizes[rank],
   * strides[rank]; the driver wants the innermost dimension first. */
  char **ptrs = (char **)ranked;
  int64_t *fields = (int64_t *)(ptrs + 2);
  int64_t offset = fields[0], *sizes = fields + 1, *strides = fields + 1 + rank;
  uint64_t dims[5], byteStrides[5];
  unsigned boxDims[5], elementStrides[5];
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = (uint64_t)sizes[rank - 1 - i];
    byteStrides[i] = (uint64_t)(strides[rank - 1 - i] * elementBytes);
    boxDims[i] = (unsigned)box[rank - 1 - i];
    elementStrides[i] = 1;
  }
  TensorMap map;
  memset(&map, 0, sizeof map);
  if (!check(p_cuTensorMapEncodeTiled(&map, (int)type, (unsigned)rank,
                                      ptrs[1] + offset * elementBytes, dims,
                                      byteStrides + 1, boxDims, elementStrides,
                                      (int)interleave, (int)swizzle,
                                      (int)l2promo, (int)oob),
             "encoding a TMA descriptor"))
    return NULL;
  void *result = NULL;
  pthread_mutex_lock(&tensorMapLock);
  for (size_t i = 0; i < numTensorMaps && !result; ++i)
    if (memcmp(&tensorMaps[i].map, &map, sizeof map) == 0)
      result = (void *)(uintptr_t)tensorMaps[i].device;
  if (!result && numTensorMaps == MAX_TENSOR_MAPS) {
    pthread_mutex_unlock(&tensorMapLock);
    if (numCallMaps == capCallMaps) {
      size_t cap = capCallMaps ? 2 * capCallMaps : 16;
      CUdeviceptr *grown = realloc(callMaps, cap * sizeof *grown);
      if (!grown) {
        check(1, "recording a TMA descriptor (out of host memory)");
        return NULL;
      }
      callMaps = grown;
      capCallMaps = cap;
    }
    CUdeviceptr ptr = deviceCopy(&map, sizeof map, "a TMA descriptor");
    if (ptr)
      callMaps[numCallMaps++] = ptr;
    return (void *)(uintptr_t)ptr;
  }
  if (!result && numTensorMaps == capTensorMaps) {
    size_t cap = capTensorMaps ? 2 * capTensorMaps : 16;
    DeviceTensorMap *grown = realloc(tensorMaps, cap * sizeof *grown);
    if (grown) {
      tensorMaps = grown;
      capTensorMaps = cap;
    } else {
      check(1, "recording a TMA descriptor (out of host memory)");
    }
  }
  if (!result && numTensorMaps < capTensorMaps) {
    CUdeviceptr ptr = deviceCopy(&map, sizeof map, "a TMA descriptor");
    if (ptr) {
      tensorMaps[numTensorMaps].map = map;
      tensorMaps[numTensorMaps].device = ptr;
      ++numTensorMaps;
      result = (void *)(uintptr_t)ptr;
    }
  }
  pthread_mutex_unlock(&tensorMapLock);
  return result;
}

__attribute__((destructor)) static void freeTensorMaps(void) {
  freeCallMaps();
  free(callMaps);
  callMaps = NULL;
  capCallMaps = 0;
  if (!unavailable[0] && p_cuMemFree_v2)
    for (size_t i = 0; i < numTensorMaps; ++i)
      p_cuMemFree_v2(tensorMaps[i].device);
  free(tensorMaps);
  tensorMaps = NULL;
  numTensorMaps = capTensorMaps = 0;
}
