/*
 * c_locale.c — numbers in the text the library writes and reads (JSON,
 * TOML, YAML, CSV, SVG, launcher arguments, messages) take the "C" locale's
 * decimal point, whatever locale the host program set: a German locale
 * would otherwise write lr = 0,0003 into files the frameworks then refuse
 * (red team rt12). uselocale changes the calling thread only, and is
 * undone when the API function returns (PP__C_NUMERIC, costmodel.h). The
 * one global of costmodel/: a constant locale object, made once.
 */
#include <pthread.h>

#include "costmodel/costmodel.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

locale_t pp__c_numeric_enter(void)
{
    pthread_once(&once, make_c_locale);
    return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void pp__c_numeric_leave(locale_t *old)
{
    if (*old) uselocale(*old);
}
