/* A hand-written provider of the decoder interface of make_composition.py
 * that fails, to check that a compiled importer reports the import's
 * failure as its own. */
#include "tessel/Runtime/tessel_abi.h"

const char tessel_artifact_manifest[] =
    "tessel-artifact 2\n"
    "target x86_64-unknown-linux-gnu\n"
    "function decoder tessel_entry_decoder\n"
    "input ids i32 [6] vocab=8\n"
    "output emb f32 [6,3]\n"
    "end\n";

int32_t tessel_entry_decoder(void **buffers, void *context) {
  (void)context;
  float *emb = (float *)buffers[1];
  for (int i = 0; i < 18; ++i)
    emb[i] = 1e30f; /* garbage the importer must not keep */
  return 5;
}
