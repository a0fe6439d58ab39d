// Allowed: evidence may include device, and io's private header io/text.h.
#include "fitspeed/device/device.h"
#include "io/text.h"
