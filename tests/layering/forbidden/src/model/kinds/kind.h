// Allowed: model includes core.
#include "fitspeed/core/error.h"
