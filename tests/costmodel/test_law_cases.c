/*
 * test_law_cases.c — one worked case per law of tests/costmodel/test_laws.c
 * that the cost model once broke, computed by hand here; each fails on the
 * code that broke it (named in the test).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "costmodel/costmodel.h"
#include "tests/fixtures.h"

#define BASE 8e-6 /* NCCL's launch latency per collective (comm.c) */

/* Law: more ranks never lower a collective's latency term. All-reduce of
 * one byte on two DGX H100 (NVLink 3.4 us per hop, InfiniBand 5 us):
 *   8 ranks, one node: ring 2 x 7 x 3.4 us = 47.6 us (+ 8 us launch);
 *   16 ranks, two nodes: NCCL's tree, a chain of 8 in each node up and
 *   down and one hop between the nodes: 2 (7 x 3.4 + 1 x 5) = 57.6 us,
 *   cheaper than the ring's 2 x 15 x 5 = 150 us.
 * The tree used to be priced 2 log2(16) x 5 = 40 us, as if all 16 ranks
 * were one binary tree over the network: below the 8-rank ring. */
Test(law_cases, tree_all_reduce_latency_by_hand)
{
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    pp__comm_group g8, g16;
    pp__group(&c, 8, 1, &g8);
    pp__group(&c, 16, 1, &g16);
    cr_expect(g16.chain == 8 && g16.tree_nodes == 2, "chain %d, nodes %d", g16.chain, g16.tree_nodes);
    double slope = 2 * 7.0 / 8 / g8.bw, slope16 = 2 / g16.bw; /* bytes/s terms of 1 byte */
    double r8 = BASE + 2 * 7 * 3.4e-6 + slope, t16 = BASE + 2 * (7 * 3.4e-6 + 1 * 5e-6) + slope16;
    cr_expect(fabs(pp__allreduce_s(&g8, 1) - r8) < 1e-12, "%.6g vs %.6g", pp__allreduce_s(&g8, 1), r8);
    cr_expect(fabs(pp__allreduce_s(&g16, 1) - t16) < 1e-12, "%.6g vs %.6g", pp__allreduce_s(&g16, 1), t16);
    cr_expect(pp__allreduce_s(&g16, 1) > pp__allreduce_s(&g8, 1));
    /* a family of groups straddling two NVLink domains (16 ranks at stride
     * 4 in blocks of 64 on 72-GPU racks) takes the tree over 2 domains */
    pp_cluster r = fx_cluster("gb200-nvl72", 16, 0);
    pp__comm_group s16;
    pp__group(&r, 16, 4, &s16);
    cr_expect(s16.crosses_nodes && s16.chain == 16 && s16.tree_nodes == 2, "chain %d, nodes %d", s16.chain,
              s16.tree_nodes);
}
