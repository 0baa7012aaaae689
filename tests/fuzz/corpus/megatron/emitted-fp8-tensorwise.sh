# Megatron-LM arguments for llama3-70b on 64 x h100-sxm (dgx-h100), written by parplan 0.1.0.
# Predicted: peak 58.8 GiB per GPU (fits), 113384 tokens/s, MFU 43.1%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
MEGATRON_ARGS=(
  # parallelism: 64 GPUs = dp 4 x tp 8 x pp 2 x cp 1
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 2
  --decoder-first-pipeline-num-layers 41
  --decoder-last-pipeline-num-layers 39
  --sequence-parallel
  --use-distributed-optimizer
  --use-precision-aware-optimizer
  --exp-avg-dtype bf16
  --exp-avg-sq-dtype bf16
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  # batch: 512 sequences per step = micro-batch 1 x 128 micro-batches x dp 4
  --micro-batch-size 1
  --global-batch-size 512
  # model: llama3-70b
  --num-layers 80
  --hidden-size 8192
  --ffn-hidden-size 28672
  --num-attention-heads 64
  --group-query-attention
  --num-query-groups 8
  --seq-length 8192
  --max-position-embeddings 8192
  --position-embedding-type rope
  --rotary-base 500000
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
  --fp8-format hybrid
  --fp8-recipe tensorwise
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
