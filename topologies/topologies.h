/*
 * topologies.h — which link tier a parallel group crosses, and the
 * bandwidth a ring over that group gets. Pure arithmetic over a pp_cluster;
 * libc only, no allocation, no globals.
 *
 * Rank layout. Ranks are numbered node-major, rank = node * gpus_per_node +
 * local GPU, as torchrun assigns them. A parallel group of `size` k and
 * `stride` s holds ranks r, r+s, ..., r+(k-1)s; the ranks are cut into
 * blocks of k*s consecutive ranks, each holding s such groups (r = block
 * start + 0..s-1). This is Megatron-LM's layout, where each group's stride is
 * the product of the degrees inside it (TP innermost: stride 1; then CP,
 * DP, PP), so k*s divides the GPU count.
 *
 * NVLink domains are nvlink_domain consecutive ranks, a whole number of
 * nodes (a DGX: one node; GB200 NVL72 as 18 trays of 4: 72 ranks).
 */
#ifndef PARPLAN_TOPOLOGIES_H
#define PARPLAN_TOPOLOGIES_H

#include "parplan.h"

typedef enum pp_topo_tier {
    PP_TOPO_INTRA, /* every group inside one NVLink domain: c->intra */
    PP_TOPO_INTER, /* some group spans domains: bounded by c->inter */
    PP_TOPO_TIER_COUNT
} pp_topo_tier;

/* What the groups of one (size, stride) family cross, worst group first. */
typedef struct pp_group_link {
    pp_topo_tier tier;
    pp_link_kind kind;  /* kind of the bottleneck tier */
    int crosses_nodes;  /* 1 if some group has members on two or more nodes */
    int nodes_spanned;  /* most nodes one group touches */
    int per_node;       /* members of one group on each node it touches */
    int per_domain;     /* members of one group in each NVLink domain (or node, if larger) */
    double bw;          /* bytes/s per GPU per direction available to a ring */
    double latency;     /* s per hop on the bottleneck tier */
} pp_group_link;

/* Fills *out for the groups of `size` ranks at `stride` on cluster c.
 *
 * Tier: INTRA when every group lies in one NVLink domain. With blocks of
 * k*s ranks aligned at multiples of k*s, that holds exactly when k = 1, or
 * the blocks tile the domain (nvlink_domain % (k*s) == 0), or the cluster
 * is a single domain.
 *
 * Bandwidth (bytes/s per GPU per direction) for a ring:
 *   - INTRA: c->intra.bw (NVLink/NVSwitch: every GPU gets its full link).
 *   - INTER: min(c->inter.bw, c->intra.bw), where inter.bw is each GPU's
 *     share of its node's NICs (nics * nic_bw / gpus_per_node). All ranks
 *     of a node run their groups' collectives at once, so one GPU can
 *     count on its share only. Conservative: when m = per_node members
 *     of a group sit on one node, NCCL runs a ring channel per NIC and
 *     each ring crosses the node boundary once, so the group can drive
 *     about m * inter.bw (capped by intra.bw); callers may apply that
 *     factor. On a multi-node NVLink domain (GB200 NVL72) NCCL fuses the
 *     topologies of the clique's hosts into one (src/graph/topo.cc, "XML
 *     topo fusion", nLocalRanks = clique.size), so there m counts the
 *     group's members in the domain: per_domain (= per_node elsewhere). Trees and in-switch reduction (NVLS/SHARP) are not
 *     modelled. Measured rings reach about 74-82% of these rates
 *     (tests/reference/interconnects.csv).
 * Latency: the bottleneck tier's per-hop latency (cluster JSON, from
 * NCCL's tuning constants).
 *
 * Node counts are exact when the blocks tile a node or whole nodes (then
 * every group has per_node members on each of nodes_spanned nodes). For
 * misaligned families (k*s neither divides nor is a multiple of
 * gpus_per_node, e.g. k = 3) nodes_spanned is an upper bound and per_node
 * (per_domain) is the fewest members any group has on a node (domain) it
 * touches, counted from the block offsets, so bandwidth scaled by it is
 * that of the slowest group.
 *
 * Returns 0, or -1 with *out zeroed when size < 1, stride < 1, the cluster
 * has no GPUs, or one group would not fit ((size-1)*stride >= GPUs). */
int pp_topo_group_link(const pp_cluster *c, int size, int stride, pp_group_link *out);

/* GPUs per NVLink domain: nvlink_domain, or gpus_per_node when unset. */
int pp_topo_domain_size(const pp_cluster *c);
/* Node and NVLink domain of a rank (node-major numbering). */
int pp_topo_node_of(const pp_cluster *c, int rank);
int pp_topo_domain_of(const pp_cluster *c, int rank);

#endif
