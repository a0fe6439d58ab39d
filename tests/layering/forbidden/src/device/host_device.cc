// Refused: a path relative to this file that lands in src/evidence.
#include "../evidence/csv_table.h"
