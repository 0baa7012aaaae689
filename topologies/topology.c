/*
 * topology.c — the link tier, node span and ring bandwidth of a parallel
 * group of size k and stride s on a cluster (model: topologies.h).
 */
#include "topologies/topologies.h"

int pp_topo_domain_size(const pp_cluster *c)
{
    return c->nvlink_domain > 0 ? c->nvlink_domain : c->gpus_per_node;
}

int pp_topo_node_of(const pp_cluster *c, int rank)
{
    return c->gpus_per_node > 0 ? rank / c->gpus_per_node : 0;
}

int pp_topo_domain_of(const pp_cluster *c, int rank)
{
    int d = pp_topo_domain_size(c);
    return d > 0 ? rank / d : 0;
}

static long long min_ll(long long a, long long b) { return a < b ? a : b; }

/* Members of the group whose first rank is p (k members at stride s < g)
 * on the node of g ranks holding its fewest, node by node. */
static long long fewest_from(long long p, long long g, long long k, long long s)
{
    long long last = p + (k - 1) * s, few = k;
    for (long long node = p / g; node <= last / g && few > 1; node++) {
        long long lo = node * g > p ? node * g : p, hi = (node + 1) * g - 1 < last ? (node + 1) * g - 1 : last;
        long long first = (lo - p + s - 1) / s, end = (hi - p) / s; /* member indices on this node */
        if (end >= first) few = min_ll(few, end - first + 1);
    }
    return few;
}

typedef struct span_memo {
    long long g, n, k, s, few;
} span_memo;

/* The fewest members any group has on one node it touches, when blocks of
 * k*s ranks do not tile nodes of g (s < g). A group starts at a block's
 * start plus j < s, and what it holds per node depends on its start modulo
 * g, so every reachable start modulo g is tried once (at most g of them). */
static long long fewest_on_node(long long g, long long n, long long k, long long s)
{
    enum { MEMO = 8, MAXG = 4096 };
    static _Thread_local span_memo memo[MEMO];
    static _Thread_local int next;
    for (int i = 0; i < MEMO; i++)
        if (memo[i].g == g && memo[i].n == n && memo[i].k == k && memo[i].s == s) return memo[i].few;
    long long block = k * s, few = k, blocks = n / block;
    if (g > MAXG) return 1; /* past the table: the lower bound */
    unsigned char seen[MAXG] = {0};
    long long period = g; /* block starts repeat modulo g within g blocks */
    /* a block larger than the cluster (a group spanning it at a large
     * stride): its groups start at j < s from rank 0 (review) */
    for (long long m = 0; (m < blocks || m == 0) && m < period && few > 1; m++)
        for (long long j = 0; j < s && few > 1 && m * block + j + (k - 1) * s < n; j++) {
            long long r = (m * block + j) % g;
            if (seen[r]) continue;
            seen[r] = 1;
            few = min_ll(few, fewest_from(r, g, k, s));
        }
    memo[next] = (span_memo){g, n, k, s, few};
    next = (next + 1) % MEMO;
    return few;
}

/* Most nodes one group touches and the members of a group per node, for
 * node size g, n ranks in all, k members at stride s in aligned blocks of
 * k*s ranks. */
static void node_span(long long g, long long n, long long k, long long s, int *nodes, int *per)
{
    long long block = k * s;
    if (n <= g || k == 1 || g % block == 0) {
        *nodes = 1; /* one node, one member, or blocks tile a node */
        *per = (int)k;
    } else if (s >= g) {
        *nodes = (int)k; /* consecutive members are a node or more apart */
        *per = 1;
    } else if (block % g == 0 && g % s == 0) {
        *per = (int)(g / s); /* blocks are whole nodes, g/s members each */
        *nodes = (int)(k / *per);
    } else {
        /* misaligned: the fewest members any group has on one node it
         * touches; a span of (k-1)s ranks touches at most (k-1)s/g + 2 nodes
         * (upper bound) */
        *per = (int)fewest_on_node(g, n, k, s);
        *nodes = (int)min_ll(min_ll(k, (k - 1) * s / g + 2), n / g);
    }
}

int pp_topo_group_link(const pp_cluster *c, int size, int stride, pp_group_link *out)
{
    *out = (pp_group_link){0};
    long long g = c->gpus_per_node, n = (long long)c->nodes * c->gpus_per_node;
    if (size < 1 || stride < 1 || c->nodes < 1 || g < 1 || (long long)(size - 1) * stride >= n)
        return -1;
    long long block = (long long)size * stride, d = pp_topo_domain_size(c);
    int inter = size > 1 && d < n && d % block != 0;
    node_span(g, n, size, stride, &out->nodes_spanned, &out->per_node);
    int spanned; /* an NVLink domain smaller than a host (PCIe pairs) counts the host */
    node_span(d > g ? d : g, n, size, stride, &spanned, &out->per_domain);
    out->crosses_nodes = out->nodes_spanned > 1;
    out->tier = inter ? PP_TOPO_INTER : PP_TOPO_INTRA;
    const pp_link *l = inter ? &c->inter : &c->intra;
    out->kind = l->kind;
    out->latency = l->latency;
    out->bw = inter && c->inter.bw < c->intra.bw ? c->inter.bw : c->intra.bw;
    return 0;
}
