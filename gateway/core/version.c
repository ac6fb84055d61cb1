/* The build's version, set by the Makefile from git describe. */
#include "core/version.h"

#ifndef TG_VERSION
#define TG_VERSION "unknown"
#endif

const char *tg_version(void)
{
    return TG_VERSION;
}
