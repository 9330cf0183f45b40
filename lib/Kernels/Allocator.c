/* Allocator.c - the buffer allocator of artifacts built with the kernel
 * library.
 *
 * finalize-memref-to-llvm is run with use-generic-functions, so every
 * memref.alloc/dealloc of the generated code lands here instead of in
 * malloc/free. A model allocates the same sequence of buffer sizes on every
 * inference, so freed blocks are kept on a free list and handed back for
 * the same size: after the first inference no call maps fresh pages (with
 * plain malloc, buffers above the mmap threshold are unmapped on free and
 * page-faulted in again on every call). Blocks are 64-byte aligned, so
 * vector loads never split cache lines at a buffer's start. */
#include "tessel/Kernels/tessel_kernels.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define ALIGN 64
#define MAX_CACHED_BLOCKS 256
#define MAX_CACHED_BYTES ((size_t)2 << 30)

typedef struct block {
  struct block *next; /* free-list link while cached */
  void *raw;          /* what malloc returned */
  size_t size;        /* usable bytes from the aligned pointer */
  size_t align;       /* alignment the block was made for */
} block_t;

/* The header sits in the ALIGN bytes before the returned pointer. */
_Static_assert(sizeof(block_t) <= ALIGN, "block header must fit");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block_t *free_list;
static size_t cached_blocks, cached_bytes;

static block_t *header(void *p) { return (block_t *)((char *)p - ALIGN); }

static void *fresh(size_t size, size_t align) {
  if (align < ALIGN)
    align = ALIGN;
  void *raw = malloc(size + align + ALIGN);
  if (!raw)
    return NULL;
  uintptr_t p = ((uintptr_t)raw + ALIGN + align - 1) & ~(uintptr_t)(align - 1);
  block_t *h = header((void *)p);
  h->raw = raw;
  h->size = size;
  h->align = align;
  return (void *)p;
}

static void *alloc(size_t size, size_t align) {
  if (size == 0)
    size = 1;
  pthread_mutex_lock(&lock);
  for (block_t **link = &free_list; *link; link = &(*link)->next) {
    block_t *b = *link;
    if (b->size == size && b->align >= align) {
      *link = b->next;
      --cached_blocks;
      cached_bytes -= b->size;
      pthread_mutex_unlock(&lock);
      return (char *)b + ALIGN;
    }
  }
  pthread_mutex_unlock(&lock);
  return fresh(size, align);
}

void *_mlir_memref_to_llvm_alloc(size_t size) { return alloc(size, ALIGN); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return alloc(size, alignment);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  block_t *b = header(ptr);
  pthread_mutex_lock(&lock);
  if (cached_blocks < MAX_CACHED_BLOCKS &&
      cached_bytes + b->size <= MAX_CACHED_BYTES) {
    b->next = free_list;
    free_list = b;
    ++cached_blocks;
    cached_bytes += b->size;
    pthread_mutex_unlock(&lock);
    return;
  }
  pthread_mutex_unlock(&lock);
  free(b->raw);
}

/* The cache lives in the artifact's static storage and dies with it: an
 * artifact unloaded (tessel_artifact_close, a hot swap, a process exit)
 * would otherwise leak every block still cached. */
__attribute__((destructor)) static void release_cached_blocks(void) {
  pthread_mutex_lock(&lock);
  block_t *b = free_list;
  free_list = NULL;
  cached_blocks = 0;
  cached_bytes = 0;
  pthread_mutex_unlock(&lock);
  while (b) {
    block_t *next = b->next;
    free(b->raw);
    b = next;
  }
}
