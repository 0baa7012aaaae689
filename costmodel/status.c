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
        err->rule = 0;
        err->field[0] = err->value[0] = '\0';
        err->detail = 0;
    }
    return st;
}

pp_status pp__fail_field(pp_error *err, int rule, const char *field, const char *value, const char *fmt, ...)
{
    if (!err) return PP_ERR_INPUT;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    snprintf(err->value, sizeof err->value, "%s", value ? value : "");
    /* a value comes from the caller's input: its control characters (a
     * newline, a terminal escape) are shown as '?' in every message */
    for (char *p = err->value; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    int n = snprintf(err->msg, sizeof err->msg, "%s%s%s: ", err->field, err->value[0] ? " " : "", err->value);
    if (n < 0 || n >= (int)sizeof err->msg) n = 0;
    err->detail = n;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
    err->rule = rule;
    return PP_ERR_INPUT;
}
