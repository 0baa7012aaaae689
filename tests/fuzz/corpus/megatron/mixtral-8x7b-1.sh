# Megatron-LM arguments for mixtral-8x7b on 32 x h100-sxm (dgx-h100), written by parplan 0.1.0.
# Predicted: peak 55.1 GiB per GPU (fits), 129152 tokens/s, MFU 26.1%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
MEGATRON_ARGS=(
  # parallelism: 32 GPUs = dp 1 x tp 8 x pp 2 x cp 2
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 2
  --num-layers-per-virtual-pipeline-stage 1
  --sequence-parallel
  --context-parallel-size 2
  --cp-comm-type p2p
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  # batch: 512 sequences per step = micro-batch 1 x 512 micro-batches x dp 1
  --micro-batch-size 1
  --global-batch-size 512
  # model: mixtral-8x7b
  --num-layers 32
  --hidden-size 4096
  --ffn-hidden-size 14336
  --num-attention-heads 32
  --group-query-attention
  --num-query-groups 8
  --seq-length 32768
  --max-position-embeddings 32768
  --position-embedding-type rope
  --rotary-base 1000000
  --normalization RMSNorm
  --norm-epsilon 1e-05
  --swiglu
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --attention-dropout 0
  --hidden-dropout 0
  --num-experts 8
  --moe-router-topk 2
  --moe-ffn-hidden-size 14336
  --make-vocab-size-divisible-by 32
  # precision and memory
  --bf16
  --fp8-format hybrid
  # optimizer and schedule
  --optimizer adam
  --adam-beta1 0.9
  --adam-beta2 0.95
  --adam-eps 1e-08
  --weight-decay 0.1
  --clip-grad 1
  --lr 0.0003
  --min-lr 0
  --lr-decay-style linear
  --lr-warmup-iters 2000
  --train-iters 100000
)
