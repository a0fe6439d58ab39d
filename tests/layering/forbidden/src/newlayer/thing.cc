// Refused: a layer the table does not know.
#include "fitspeed/core/error.h"
