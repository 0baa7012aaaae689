/* status.c — status names, exit codes and the error formatter. */
#include <stdarg.h>
#include <stdio.h>

#include "costmodel/costmodel.h"

const char *pp_status_str(pp_status st)
{
    switch (st) {
    case PP_OK: return "ok";
    case PP_ERR_INPUT: return "bad input";
    case PP_ERR_INFEASIBLE: return "infeasible";
    case PP_ERR_IO: return "i/o error";
    case PP_ERR_NOMEM: return "out of memory";
    case PP_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

int pp_status_exit_code(pp_status st)
{
    switch (st) {
    case PP_OK: return 0;
    case PP_ERR_INFEASIBLE: return 1;
    case PP_ERR_INPUT:
    case PP_ERR_IO: return 2;
    default: return 3;
    }
}

const char *pp_version(void) { return PP_VERSION_STRING; }

pp_status pp__fail(pp_error *err, pp_status st, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}
