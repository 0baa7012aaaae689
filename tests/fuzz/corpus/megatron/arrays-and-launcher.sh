#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPT_ARGS=(
    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32
    --group-query-attention --num-query-groups 8 --seq-length 8192 --max-position-embeddings 8192
    --position-embedding-type rope --rotary-base 500000 --normalization RMSNorm --norm-epsilon 1e-05
    --swiglu --untie-embeddings-and-output-weights --disable-bias-linear
    --attention-dropout 0 --hidden-dropout 0
)
PARALLEL_ARGS=( --pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 14 --num-virtual-stages-per-pipeline-rank 2 )
TRAIN_ARGS=( --bf16 --micro-batch-size 1 --global-batch-size 64 --lr 3e-4 )
torchrun --nproc_per_node 8 pretrain_gpt.py "${GPT_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAIN_ARGS[@]}"
