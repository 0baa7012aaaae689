/*
 * test_divisors.c — pp__divisors (planner/space.c), the O(sqrt n)
 * enumeration behind the search's micro-batch candidates (the divisors of
 * global batch / dp), degrees and experts (issue 14 item 10: trial division
 * up to n made a 2^26 global batch take 16 s on 65,536 GPUs; bench case (f)
 * times it now). Checked against trial division written out here for every
 * n up to 5,000; beyond, each value must divide n, in increasing order, and
 * their count must be the product of (exponent + 1) over n's prime
 * factorisation (squares, primes and highly composite numbers up to 2^31-1,
 * 2,000 random n); a cap keeps the smallest divisors.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "planner/planner.h"

static int brute(long long n, int *out, int cap)
{
    int k = 0;
    for (long long d = 1; d <= n && k < cap; d++)
        if (n % d == 0) out[k++] = (int)d;
    return k;
}

static void same(long long n, int cap)
{
    static int a[2048], b[2048];
    int na = pp__divisors(n, a, cap), nb = brute(n, b, cap);
    cr_assert_eq(na, nb, "n = %lld, cap %d: %d divisors, trial division finds %d", n, cap, na, nb);
    for (int i = 0; i < na; i++) cr_assert_eq(a[i], b[i], "n = %lld, cap %d: divisor %d is %d, want %d", n, cap, i, a[i], b[i]);
}

/* tau(n) = prod (e + 1) over n = prod p^e */
static int tau(long long n)
{
    int t = 1;
    for (long long p = 2; p * p <= n; p++) {
        int e = 0;
        while (n % p == 0) n /= p, e++;
        t *= e + 1;
    }
    return n > 1 ? 2 * t : t;
}

/* All of n's divisors, increasing, their number tau(n); with a cap, the
 * smallest cap of them. */
static void law(long long n, int cap)
{
    static int all[2048], some[2048];
    int na = pp__divisors(n, all, 2048), t = tau(n);
    cr_assert_eq(na, t, "n = %lld: %d divisors, tau = %d", n, na, t);
    for (int i = 0; i < na; i++) {
        cr_assert(all[i] > 0 && n % all[i] == 0, "n = %lld: %d is no divisor", n, all[i]);
        cr_assert(i == 0 || all[i] > all[i - 1], "n = %lld: not increasing at %d", n, i);
    }
    int ns = pp__divisors(n, some, cap);
    cr_assert_eq(ns, cap < t ? cap : t, "n = %lld, cap %d: %d", n, cap, ns);
    for (int i = 0; i < ns; i++) cr_assert_eq(some[i], all[i], "n = %lld, cap %d: %d", n, cap, i);
}

Test(divisors, every_n_up_to_5000_against_trial_division)
{
    for (long long n = 1; n <= 5000; n++) same(n, 2048);
    for (long long n = 1; n <= 5000; n += 7) same(n, 3);
}

Test(divisors, large_and_special_n)
{
    /* 2^26 (27 divisors), the largest 32-bit prime, a prime's square,
     * 61,261,200 = 2^4 3^2 5^2 7 11 13 17 (720 divisors), 2^31-1 (prime),
     * 735,134,400 (1,344 divisors, the most of any n below 2^31) */
    static const long long ns[] = {1LL << 26, 2147483629LL, 46337LL * 46337, 61261200, 2147483647LL, 735134400};
    int d[2048];
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) law(ns[i], 10);
    cr_expect_eq(pp__divisors(1LL << 26, d, 2048), 27);
    cr_expect_eq(pp__divisors(61261200, d, 2048), 720);
    cr_expect_eq(pp__divisors(735134400, d, 2048), 1344);
    cr_expect_eq(pp__divisors(2147483647LL, d, 2048), 2);
}

Test(divisors, random_n_and_caps)
{
    srand(14);
    for (int t = 0; t < 2000; t++) {
        long long n = 1 + ((long long)rand() * 32768 + rand() % 32768) % 2147483647LL;
        law(n, 1 + rand() % 40);
    }
}
