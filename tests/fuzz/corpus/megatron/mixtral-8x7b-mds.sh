# Megatron-DeepSpeed arguments for mixtral-8x7b on 32 x h100-sxm (dgx-h100), written by parplan 0.1.0.
# Predicted: peak 65.6 GiB per GPU (fits), 97494 tokens/s, MFU 39.4%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
MEGATRON_ARGS=(
  # parallelism: 32 GPUs = dp 4 x tp 1 x pp 1 x cp 8
  --tensor-model-parallel-size 1
  --pipeline-model-parallel-size 1
  --no-pipeline-parallel
  --ds-sequence-parallel-size 8
  --moe-expert-parallel-size 8
  # batch: 512 sequences per step = micro-batch 1 x 128 micro-batches x dp 4
  --micro-batch-size 1
  --global-batch-size 512
  # model: mixtral-8x7b
  --num-layers 32
  --hidden-size 4096
  --ffn-hidden-size 14336
  --num-attention-heads 32
  --num-key-value-heads 8
  --seq-length 32768
  --max-position-embeddings 32768
  --use-rotary-position-embeddings
  --rotary-position-embeddings-theta 1000000
  --normalization rmsnorm
  --layernorm-epsilon 1e-05
  --swiglu
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --attention-dropout 0
  --hidden-dropout 0
  --num-experts 8
  --topk 2
  --disable-moe-token-dropping
  --make-vocab-size-divisible-by 128
  # precision and memory
  --bf16
  --use-flash-attn-v2
  --cpu-optimizer
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
  # DeepSpeed (the JSON decides the ZeRO stage; keep the flag equal)
  --deepspeed
  --deepspeed_config 'ds_config.json'
  --zero-stage 1
)
