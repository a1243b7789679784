/* Stands in for the HIP backend when libweft is built without HIP headers
 * (or with WEFT_ENABLE_HIP=OFF), so backend selection can name it. */
#include "backend.h"

static int hip_available(void) { return 0; }

static weft_status hip_open(const weft_backend_params *params, void **state) {
  (void)params;
  *state = 0;
  return weft_fail(WEFT_ERROR_UNSUPPORTED,
                   "the hip backend is not built into this libweft (configure "
                   "with WEFT_ENABLE_HIP=ON and the HIP headers installed)");
}

const weft_backend_ops weft_backend_hip = {
    .name = "hip",
    .warp_size = 64,
    .available = hip_available,
    .open = hip_open,
};
