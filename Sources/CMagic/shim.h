#include <magic.h>

// The builtin-check mask is a compound macro Swift cannot import.
static const int RP_MAGIC_NO_CHECK_BUILTIN = MAGIC_NO_CHECK_BUILTIN;
