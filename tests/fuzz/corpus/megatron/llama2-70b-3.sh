# Megatron-LM arguments for llama2-70b on 64 x a100-80g (dgx-a100-80g), written by parplan 0.1.0.
# Predicted: peak 65.6 GiB per GPU (fits), 28105 tokens/s, MFU 62.6%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
MEGATRON_ARGS=(
  # parallelism: 64 GPUs = dp 4 x tp 8 x pp 2 x cp 1
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 2
  --num-layers-per-virtual-pipeline-stage 4
  --sequence-parallel
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  # batch: 512 sequences per step = micro-batch 2 x 64 micro-batches x dp 4
  --micro-batch-size 2
  --global-batch-size 512
  # model: llama2-70b
  --num-layers 80
  --hidden-size 8192
  --ffn-hidden-size 28672
  --num-attention-heads 64
  --group-query-attention
  --num-query-groups 8
  --seq-length 4096
  --max-position-embeddings 4096
  --position-embedding-type rope
  --rotary-base 10000
  --normalization RMSNorm
  --norm-epsilon 1e-05
  --swiglu
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --attention-dropout 0
  --hidden-dropout 0
  --make-vocab-size-divisible-by 32
  # precision and memory
  --bf16
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
