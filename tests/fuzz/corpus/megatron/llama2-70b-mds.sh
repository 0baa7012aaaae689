# Megatron-DeepSpeed arguments for llama2-70b on 64 x a100-80g (dgx-a100-80g), written by parplan 0.1.0.
# Predicted: peak 56.9 GiB per GPU (fits), 25855 tokens/s, MFU 57.6%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
MEGATRON_ARGS=(
  # parallelism: 64 GPUs = dp 4 x tp 4 x pp 4 x cp 1
  --tensor-model-parallel-size 4
  --pipeline-model-parallel-size 4
  --sequence-parallel
  # batch: 512 sequences per step = micro-batch 1 x 128 micro-batches x dp 4
  --micro-batch-size 1
  --global-batch-size 512
  # model: llama2-70b
  --num-layers 80
  --hidden-size 8192
  --ffn-hidden-size 28672
  --num-attention-heads 64
  --num-key-value-heads 8
  --seq-length 4096
  --max-position-embeddings 4096
  --use-rotary-position-embeddings
  --rotary-position-embeddings-theta 10000
  --normalization rmsnorm
  --layernorm-epsilon 1e-05
  --swiglu
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --attention-dropout 0
  --hidden-dropout 0
  --make-vocab-size-divisible-by 64
  # precision and memory
  --bf16
  --use-flash-attn-v2
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
