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
        /* misaligned: some group may have a single member on an edge node
         * (lower bound 1); a span of (k-1)s ranks touches at most
         * (k-1)s/g + 2 nodes (upper bound) */
        *per = 1;
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
