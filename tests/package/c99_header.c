/* Compiled as C99 with -Wall -Wextra -Werror -pedantic: the public header
 * must stay usable from plain C. */
#include <ggufguard/ggufguard.h>

int ggufguard_c99_header_check(void);
int ggufguard_c99_header_check(void) {
  ggufguard_tensor t;
  ggufguard_finding f;
  ggufguard_deep_tensor d;
  t.n_dims = 0;
  f.severity = GGUFGUARD_SEVERITY_ERROR;
  d.ggml_type = 1;
  return (int)t.n_dims + f.severity + (int)d.ggml_type + GGUFGUARD_TYPE_FLOAT64 + GGUFGUARD_ERR_INTERNAL;
}
