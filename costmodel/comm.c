/*
 * comm.c — alpha-beta costs of NCCL collectives over a parallel group
 * (docs/time.md). Ring algorithms (Thakur et al. 2005; NCCL's bus-bandwidth
 * convention), a double binary tree for all-reduce across nodes where its
 * latency wins, and measured NCCL efficiencies:
 *   intra-node ring busbw / link rate: 8xA100 234.9/300 = 0.78, 8xH200
 *   367.6/450 = 0.82 -> 0.80; across nodes: 36.95/50 = 0.74 (8xB200 EFA v4,
 *   tests/reference/interconnects.csv).
 * NCCL's base latency per collective is ~6.6-8.4 us (src/graph/tuning.cc).
 */
#include <math.h>

#include "costmodel/costmodel.h"
#include "topologies/topologies.h"

#define NCCL_EFF_INTRA 0.80
#define NCCL_EFF_INTER 0.74
#define NCCL_BASE_LATENCY 8e-6 /* s per collective call */
/* NCCL kernels run one CTA per channel on the GPU's SMs, so compute slows
 * while a collective overlaps it: an all-gather took 24 of an H100's 132
 * SMs (0.18) in an nsys trace on NVIDIA's developer forum ("Compute-
 * communication overlap causes severe GEMM performance degradation", 2025);
 * 16-24 channels on an A100's 108 SMs are 0.15-0.22. */
#define NCCL_OVERLAP_SLOWDOWN 0.20

double pp__overlap_slowdown(const pp_cluster *c)
{
    return c->nccl_overlap > 0 ? c->nccl_overlap : c->nccl_overlap < 0 ? 0 : NCCL_OVERLAP_SLOWDOWN;
}

double pp__exposed(double slowdown, double comm, double hide)
{
    if (comm <= 0) return 0;
    if (hide < 0) hide = 0;
    double hidden = comm < hide ? comm : hide;
    return comm - hidden + slowdown * hidden;
}

void pp__group(const pp_cluster *c, int size, int stride, pp__comm_group *g)
{
    pp_group_link gl;
    g->n = size;
    g->bw = 0;
    g->latency = 0;
    g->crosses_nodes = 0;
    g->chain = 1;
    g->tree_nodes = 1;
    g->intra_latency = 0;
    g->nic_bw = g->intra_bw = 0;
    g->local = 1;
    if (size <= 1 || pp_topo_group_link(c, size, stride, &gl) != 0) return;
    /* at stride s a domain of d ranks holds at most ceil(d/s) members */
    int d = pp_topo_domain_size(c), cap = stride >= d ? 1 : (d + stride - 1) / stride;
    g->chain = size < cap ? size : cap;
    g->tree_nodes = (size + g->chain - 1) / g->chain;
    if (gl.tier == PP_TOPO_INTER && g->tree_nodes < 2) g->tree_nodes = 2; /* a family straddling domains */
    g->intra_latency = c->intra.latency;
    double ei = c->nccl_eff_intra > 0 ? c->nccl_eff_intra : NCCL_EFF_INTRA;
    double ee = c->nccl_eff_inter > 0 ? c->nccl_eff_inter : NCCL_EFF_INTER;
    g->crosses_nodes = gl.crosses_nodes;
    /* AMD's xGMI is a full mesh, g - 1 links a GPU (MI300X: 7 x 64 GB/s a
     * direction, "only 64 GB/s/dir to any one peer": hardware.csv): k
     * members of a group in a node reach each other over k - 1 of them */
    double mesh = 1;
    if (c->intra.kind == PP_LINK_XGMI && c->gpus_per_node > 1 && gl.per_node >= 1 && gl.per_node < c->gpus_per_node)
        mesh = (double)(gl.per_node > 1 ? gl.per_node - 1 : 1) / (c->gpus_per_node - 1);
    if (gl.tier == PP_TOPO_INTRA) {
        g->bw = c->intra.bw * mesh * ei;
        g->latency = c->intra.latency;
    } else {
        /* NCCL runs one ring channel per NIC: m members of the group in a
         * node drive m NICs, bounded by the intra-node link. On a
         * multi-node NVLink domain NCCL fuses the clique's hosts into one
         * topology (src/graph/topo.cc), so m counts the domain's members. */
        double nic = c->inter.bw * gl.per_domain * ee, intra = c->intra.bw * mesh * ei;
        g->bw = nic < intra ? nic : intra;
        g->nic_bw = c->inter.bw * ee;
        g->intra_bw = intra;
        g->local = gl.per_domain > 0 ? gl.per_domain : 1;
        g->latency = c->inter.latency > c->intra.latency ? c->inter.latency : c->intra.latency;
    }
}

static double alpha(const pp__comm_group *g) { return g->latency; }

double pp__allreduce_s(const pp__comm_group *g, double bytes)
{
    if (g->n <= 1 || bytes <= 0 || g->bw <= 0) return 0;
    double n = g->n, bw = bytes / g->bw;
    double ring = 2 * (n - 1) * alpha(g) + 2 * (n - 1) / n * bw;
    double t = ring;
    if (g->tree_nodes > 1) {
        /* NCCL's tree: up a chain inside each domain and a double binary
         * tree across domains, then down again; its latency (tuning.cc,
         * ncclTopoTuneModel) is 2 ((nRanks/nNodes - 1) intraLat +
         * log2(nNodes) interLat) */
        double lat = 2 * ((g->chain - 1) * g->intra_latency + ceil(log2(g->tree_nodes)) * alpha(g));
        double tree = lat + 2 * bw;
        if (tree < t) t = tree;
    }
    return NCCL_BASE_LATENCY + t;
}

double pp__allgather_s(const pp__comm_group *g, double bytes)
{
    if (g->n <= 1 || bytes <= 0 || g->bw <= 0) return 0;
    double n = g->n;
    return NCCL_BASE_LATENCY + (n - 1) * alpha(g) + (n - 1) / n * bytes / g->bw;
}

double pp__reducescatter_s(const pp__comm_group *g, double bytes) { return pp__allgather_s(g, bytes); }

/* All-to-all: each member sends (n-1)/n of its bytes. Inside one domain
 * that is a ring's rate; across domains, the share bound for the other
 * domains leaves through the member's own NIC (every member of a node sends
 * at once, so the node's NICs give each its share; DeepEP's internode
 * kernels reach 43-58 GB/s per H800 over one 400 Gb/s NIC, deepseek-ai/DeepEP
 * README), while the share for its own domain goes over NVLink meanwhile. */
double pp__alltoall_s(const pp__comm_group *g, double bytes)
{
    if (g->n <= 1 || bytes <= 0 || g->bw <= 0) return 0;
    double n = g->n, t = (n - 1) / n * bytes / g->bw;
    if (g->tree_nodes > 1 && g->nic_bw > 0) {
        double m = g->local, on = (m - 1) / n * bytes / g->intra_bw, off = (n - m) / n * bytes / g->nic_bw;
        t = on > off ? on : off;
    }
    return NCCL_BASE_LATENCY + (n - 1) * alpha(g) + t;
}

/* DeepEP's normal kernels (deepseek-ai/DeepEP README; HybridEP the same
 * hierarchy) send a token over RDMA once to each other node holding one of
 * its experts and forward it over NVLink there: with k experts spread
 * uniformly over D domains a token reaches D (1 - (1 - 1/D)^k) of them. */
/* Domains one token reaches: k experts uniform over d domains; with
 * group-limited routing (DeepSeek-V3: its 8 expert groups are spread
 * evenly, experts placed in order, and a token picks 4):
 *   - d divides G (whole groups per domain): the domains holding the
 *     chosen groups, d (1 - C(G - G/d, t) / C(G, t));
 *   - G divides d (a group spans d/G domains): the k experts fall
 *     uniformly in the t d/G domains of the chosen groups;
 *   - otherwise groups straddle domains unevenly: free routing's count.
 * Never more than free routing. */
static double domains_reached(double d, double k, int groups, int topk_groups)
{
    double free_k = d * (1 - pow(1 - 1 / d, k));
    if (groups <= 0 || topk_groups <= 0) return free_k;
    double lim = free_k;
    int nd = (int)d;
    if (nd != d || nd < 1) return free_k;
    if (groups % nd == 0) {
        double miss = 1; /* C(G - G/d, t) / C(G, t) */
        for (int i = 0; i < topk_groups; i++) miss *= (double)(groups - groups / nd - i) / (groups - i);
        lim = d * (1 - (miss > 0 ? miss : 0));
    } else if (nd % groups == 0) {
        double span = (double)topk_groups * (nd / groups);
        lim = span * (1 - pow(1 - 1 / span, k));
    }
    return lim < free_k ? lim : free_k;
}

/* The same when each copy fans out to `fan` ranks once it arrives (the
 * flex dispatcher's expert-TP shards): the NVLink side carries fan x. */
double pp__alltoall_dedup_fan_s(const pp__comm_group *g, double bytes, double k, int groups, int topk_groups,
                                double fan)
{
    if (g->tree_nodes <= 1 || g->nic_bw <= 0 || k <= 1) return pp__alltoall_s(g, bytes * fan);
    if (g->n <= 1 || bytes <= 0) return 0;
    double n = g->n, m = g->local, d = n / m, reach = domains_reached(d, k, groups, topk_groups);
    double off = bytes / k * reach * (d - 1) / d / g->nic_bw, on = (m - 1) / n * bytes * fan / g->intra_bw;
    return NCCL_BASE_LATENCY + (n - 1) * alpha(g) + (on > off ? on : off);
}

double pp__alltoall_dedup_s(const pp__comm_group *g, double bytes, double k, int groups, int topk_groups)
{
    return pp__alltoall_dedup_fan_s(g, bytes, k, groups, topk_groups, 1);
}

/* One hop of a ring of point-to-point sends (context parallelism's K/V
 * ring): each member sends to the next at once, and where the ring leaves a
 * node that hop is one GPU sending to one GPU through its own NIC share,
 * whatever the other members in the node do (NCCL send/recv: one peer, one
 * NIC), not the node's pooled NICs a collective's channels drive. */
double pp__ring_hop_s(const pp__comm_group *g, double bytes)
{
    if (g->n <= 1 || bytes <= 0 || g->bw <= 0) return 0;
    double bw = g->tree_nodes > 1 && g->nic_bw > 0 ? fmin(g->nic_bw, g->intra_bw > 0 ? g->intra_bw : g->nic_bw) : g->bw;
    return NCCL_BASE_LATENCY + alpha(g) + bytes / bw;
}

double pp__sendrecv_s(const pp__comm_group *g, double bytes)
{
    if (g->n <= 1 || bytes <= 0 || g->bw <= 0) return 0;
    return NCCL_BASE_LATENCY + alpha(g) + bytes / g->bw;
}
