/*
 * c_api_smoke.c - proves tessel_runtime.h is usable from plain C: loads the
 * multi-function fake artifact (argv[1]), runs 'add' and checks the result.
 */
#include "tessel/Runtime/tessel_runtime.h"

#include <stdio.h>
#include <string.h>

static int failed(tessel_status_t *s, const char *what) {
  fprintf(stderr, "%s: %s: %s\n", what,
          tessel_status_code_name(tessel_status_code(s)),
          tessel_status_message(s));
  tessel_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  tessel_artifact_t *artifact = NULL;
  const tessel_function_t *add = NULL;
  tessel_tensor_t *x = NULL, *y = NULL, *out = NULL;
  tessel_tensor_t *inputs[2];
  tessel_invoke_options_t options;
  tessel_status_t *s;
  int64_t dims[2] = {2, 3};
  float xs[6] = {1, 2, 3, 4, 5, 6};
  const float *o;
  int i, rc = 0;

  if (argc != 2)
    return 2;
  if ((s = tessel_artifact_load(argv[1], &artifact)))
    return failed(s, "load");
  if ((s = tessel_artifact_lookup_function(artifact, "add", &add)))
    return failed(s, "lookup");
  if ((s = tessel_tensor_wrap(TESSEL_DTYPE_F32, 2, dims, xs, sizeof xs, &x)))
    return failed(s, "wrap");
  if ((s = tessel_tensor_parse("2x3xf32=10 20 30 40 50 60", &y)))
    return failed(s, "parse");
  inputs[0] = x;
  inputs[1] = y;
  tessel_invoke_options_init(&options);
  options.num_threads = 2;
  if ((s = tessel_function_invoke(add, inputs, 2, &out, 1, &options)))
    return failed(s, "invoke");
  o = (const float *)tessel_tensor_const_data(out);
  for (i = 0; i < 6; ++i)
    if (o[i] != xs[i] * 11)
      rc = 1;
  printf("%s: %s\n", tessel_function_name(add), rc ? "WRONG" : "ok");
  tessel_tensor_free(out);
  tessel_tensor_free(y);
  tessel_tensor_free(x);
  tessel_artifact_free(artifact);
  return rc;
}
