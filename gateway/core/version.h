/* The build's version (git describe), compiled into one object. */
#ifndef TG_CORE_VERSION_H
#define TG_CORE_VERSION_H

const char *tg_version(void);

#endif
