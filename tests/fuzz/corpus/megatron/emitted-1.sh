# Megatron-LM arguments for llama3-8b on 8 x h100-sxm (dgx-h100), written by parplan 0.1.0.
# Predicted: peak 61.6 GiB per GPU (fits), 87149 tokens/s, MFU 31.9%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
MEGATRON_ARGS=(
  # parallelism: 8 GPUs = dp 4 x tp 2 x pp 1 x cp 1
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 1
  --sequence-parallel
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  # batch: 512 sequences per step = micro-batch 1 x 128 micro-batches x dp 4
  --micro-batch-size 1
  --global-batch-size 512
  # model: llama3-8b
  --num-layers 32
  --hidden-size 4096
  --ffn-hidden-size 14336
  --num-attention-heads 32
  --group-query-attention
  --num-query-groups 8
  --seq-length 8192
  --max-position-embeddings 8192
  --position-embedding-type rope
  --normalization RMSNorm
  --swiglu
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --attention-dropout 0
  --hidden-dropout 0
  --make-vocab-size-divisible-by 128
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
