// Refused twice: model may not include io, and a public header may not
// include a private one.
#include "fitspeed/core/output_format.h"
#include "fitspeed/io/output.h"
#include "io/text.h"
